#include "onceorder/service/invariants.hpp"

#include <algorithm>

#include "store/invariants_store.hpp"

namespace onceorder {
namespace {

// Rows described per invariant: enough to start looking, short enough for /metrics and check.
constexpr size_t kSample = 5;

std::vector<std::string> sample(std::vector<std::string> rows) {
  rows.resize(std::min(rows.size(), kSample));
  return rows;
}

}  // namespace

Result<std::vector<InvariantResult>> check_invariants(store::Database& db,
                                                      store::Clock::time_point deadline) {
  store::InvariantsStore invariants(db.dialect());
  return store::transact<std::vector<InvariantResult>>(
      db, store::TxOptions{deadline, 3, store::TxMode::read},
      [&](store::Connection& c) -> Result<std::vector<InvariantResult>> {
        OO_ASSIGN_OR_RETURN(auto checked, invariants.check_all(c));
        std::vector<InvariantResult> out;
        out.reserve(checked.size());
        for (auto& inv : checked) {
          InvariantResult r{std::move(inv.id),
                            std::move(inv.name),
                            static_cast<std::int64_t>(inv.violations.size()),
                            {},
                            static_cast<std::int64_t>(inv.accepted.size()),
                            {}};
          r.sample = sample(std::move(inv.violations));
          r.accepted_sample = sample(std::move(inv.accepted));
          out.push_back(std::move(r));
        }
        return out;
      });
}

}  // namespace onceorder
