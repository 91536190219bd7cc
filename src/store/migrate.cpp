#include <fmt/format.h>

#include "onceorder/store.hpp"
#include "store/migrations.hpp"

namespace onceorder::store {
namespace {

constexpr Statement kCreateTable{
    "migrate_create",
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT "
    "NULL, applied_at TEXT NOT NULL)"};
constexpr Statement kCurrent{"migrate_current",
                             "SELECT COALESCE(MAX(version), 0) FROM schema_migrations"};
constexpr Statement kHasTableSqlite{
    "migrate_has_table_sqlite",
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"};
constexpr Statement kHasTablePg{"migrate_has_table_pg",
                                "SELECT count(*) FROM pg_tables WHERE schemaname = "
                                "current_schema() AND tablename = 'schema_migrations'"};

Clock::time_point far_deadline() { return Clock::now() + std::chrono::minutes(5); }

Result<int> read_version(Connection& c) {
  OO_ASSIGN_OR_RETURN(auto has,
                      c.query(c.engine() == Engine::sqlite ? kHasTableSqlite : kHasTablePg, {}));
  if (has.at(0).i64(0) == 0) return 0;
  OO_ASSIGN_OR_RETURN(auto rows, c.query(kCurrent, {}));
  return static_cast<int>(rows.at(0).i64(0));
}

// Runs `fn` with the cross-process migration lock held on one connection.
Result<int> with_migration_lock(Database& db, const std::function<Result<int>(Connection&)>& fn) {
  OO_ASSIGN_OR_RETURN(auto conn, db.acquire(far_deadline()));
  OO_RETURN_IF_ERROR(conn->lock_migrations());
  Result<int> r = fn(*conn);
  conn->unlock_migrations();
  return r;
}

Status run_step(Connection& c, std::string_view script, std::string_view record_sql) {
  OO_RETURN_IF_ERROR(c.exec_script(script));
  return c.exec_script(record_sql);
}

}  // namespace

int latest_schema_version(Engine engine) {
  auto list = migrations_for(engine);
  return list.empty() ? 0 : list.back().version;
}

Result<int> current_schema_version(Database& db) {
  OO_ASSIGN_OR_RETURN(auto conn, db.acquire(Clock::now() + std::chrono::seconds(5)));
  return read_version(*conn);
}

Result<int> migrate(Database& db, int target) {
  return with_migration_lock(db, [&](Connection& c) -> Result<int> {
    int version = 0;
    for (const Migration& m : migrations_for(db.engine())) {
      if (m.version > target) break;
      // Each migration is its own transaction; the version is re-read under the write
      // lock so that a process that lost the race applies nothing twice.
      OO_RETURN_IF_ERROR(c.begin(TxMode::write));
      if (Status st = c.query(kCreateTable, {}).status(); !st.ok()) {
        c.rollback();
        return st;
      }
      auto current = read_version(c);
      if (!current.ok()) {
        c.rollback();
        return current.status();
      }
      version = *current;
      if (m.version <= version) {
        c.rollback();
        continue;
      }
      const auto now_sql = db.engine() == Engine::sqlite ? "strftime('%Y-%m-%dT%H:%M:%fZ','now')"
                                                         : "to_char(now() AT TIME ZONE 'UTC', "
                                                           "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";
      Status st = run_step(c, m.up,
                           fmt::format("INSERT INTO schema_migrations VALUES ({}, '{}', {})",
                                       m.version, m.name, now_sql));
      if (st.ok()) st = c.commit();
      if (!st.ok()) {
        c.rollback();
        // The live-item index is the one a database can refuse: legacy duplicates.
        const std::string hint =
            st.code() == Code::unique_violation
                ? "; duplicate live schedule items block a unique index: `onceorder legacy "
                  "dedup` shows which rows would be kept and `onceorder legacy dedup --apply` "
                  "soft-aborts the rest"
                : "";
        return Status(st.code(), fmt::format("migration {} ({}) failed: {}{}", m.version, m.name,
                                             st.message(), hint));
      }
      version = m.version;
    }
    return version;
  });
}

Status migrate_down(Database& db, int target) {
  return with_migration_lock(
             db,
             [&](Connection& c) -> Result<int> {
               auto list = migrations_for(db.engine());
               for (auto it = list.rbegin(); it != list.rend(); ++it) {
                 OO_ASSIGN_OR_RETURN(int current, read_version(c));
                 if (it->version > current || it->version <= target) continue;
                 OO_RETURN_IF_ERROR(c.begin(TxMode::write));
                 Status st = run_step(
                     c, it->down,
                     fmt::format("DELETE FROM schema_migrations WHERE version = {}", it->version));
                 if (st.ok()) st = c.commit();
                 if (!st.ok()) {
                   c.rollback();
                   return st;
                 }
               }
               return target;
             })
      .status();
}

}  // namespace onceorder::store
