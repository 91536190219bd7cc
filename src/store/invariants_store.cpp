#include "store/invariants_store.hpp"

namespace onceorder::store {
namespace {

Result<std::vector<std::string>> described(store::Connection& c, const Statement& stmt) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(stmt, {}));
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(r.text(0));
  return out;
}

}  // namespace

InvariantsStore::InvariantsStore(const Dialect& dialect) : invariants_(dialect.invariants) {}

Result<std::vector<InvariantRows>> InvariantsStore::check_all(store::Connection& c) {
  std::vector<InvariantRows> out;
  out.reserve(invariants_.size());
  for (const InvariantSql& inv : invariants_) {
    InvariantRows r{std::string(inv.id), std::string(inv.name), {}, {}};
    OO_ASSIGN_OR_RETURN(r.violations, described(c, inv.violations));
    if (inv.accepted) {
      OO_ASSIGN_OR_RETURN(r.accepted, described(c, *inv.accepted));
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace onceorder::store
