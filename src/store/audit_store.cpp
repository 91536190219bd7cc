#include "store/audit_store.hpp"

namespace onceorder::store {

AuditStore::AuditStore(const Dialect& dialect) : sql_(dialect.audit) {}

Result<std::int64_t> AuditStore::record(store::Connection& c, const ActionRecord& a) {
  const Param target = a.target ? Param(std::string_view(*a.target)) : Param(nullptr);
  const Param status = a.status != 0 ? Param(std::int64_t{a.status}) : Param(nullptr);
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.record, {std::string_view(a.principal), std::string_view(a.role),
                                       std::string_view(a.action), target, status,
                                       std::string_view(a.summary), std::string_view(a.outcome)}));
  if (rows.empty()) return Status(Code::internal, "the audit row was not inserted");
  return rows.front().i64(0);
}

Status AuditStore::finish(store::Connection& c, const ActionRecord& a) {
  const Param target = a.target ? Param(std::string_view(*a.target)) : Param(nullptr);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.finish, {a.action_id, std::int64_t{a.status}, target,
                                                       std::string_view(a.summary)}));
  if (rows.empty()) return Status(Code::internal, "the audit row to finish is not there");
  return Status::Ok();
}

Result<std::vector<ActionRecord>> AuditStore::list(store::Connection& c, const ActionFilter& f) {
  const Param principal = nullable(f.principal);
  const Param action = nullable(f.action);
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.list, {principal, action, f.before, std::int64_t{f.limit}}));
  std::vector<ActionRecord> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    ActionRecord a;
    a.action_id = r.i64(0);
    a.at = r.text(1);
    a.principal = r.text(2);
    a.role = r.text(3);
    a.action = r.text(4);
    if (!r.is_null(5)) a.target = r.text(5);
    a.status = static_cast<int>(r.i64(6));  // null reads 0
    a.summary = r.text(7);
    a.outcome = r.text(8);
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::int64_t>>> AuditStore::per_minute(
    store::Connection& c, const Statement& statement, std::string_view since) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(statement, {since}));
  std::vector<std::pair<std::string, std::int64_t>> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.emplace_back(r.text(0), r.i64(1));
  return out;
}

}  // namespace onceorder::store
