#include <fmt/format.h>

#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"
#include "store/events_store.hpp"

namespace onceorder::store {
namespace {

constexpr Statement kCreateTable{
    "migrate_create",
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT "
    "NULL, applied_at TEXT NOT NULL)"};
constexpr Statement kCurrent{"migrate_current",
                             "SELECT COALESCE(MAX(version), 0) FROM schema_migrations"};
Clock::time_point far_deadline() { return Clock::now() + std::chrono::minutes(5); }

Result<int> read_version(Connection& c) {
  OO_ASSIGN_OR_RETURN(auto has, c.query(dialect_for(c.engine()).has_migrations_table, {}));
  if (has.at(0).i64(0) == 0) return 0;
  OO_ASSIGN_OR_RETURN(auto rows, c.query(kCurrent, {}));
  return static_cast<int>(rows.at(0).i64(0));
}

// Runs `fn` on a pooled connection while a connection of its own (outside the pool, so a
// pool of one still has its connection for `fn`) holds the cross-process migration lock.
Result<int> with_migration_lock(Database& db, const std::function<Result<int>(Connection&)>& fn) {
  OO_ASSIGN_OR_RETURN(auto lock, db.connect_dedicated());
  OO_RETURN_IF_ERROR(lock->lock_migrations());
  Result<int> r = [&]() -> Result<int> {
    OO_ASSIGN_OR_RETURN(auto conn, db.acquire(far_deadline()));
    return fn(*conn);
  }();
  lock->unlock_migrations();
  return r;
}

Status run_step(Connection& c, std::string_view script, std::string_view record_sql) {
  OO_RETURN_IF_ERROR(c.exec_script(script));
  return c.exec_script(record_sql);
}

std::string record_sql(Engine engine, const Migration& m) {
  return fmt::format("INSERT INTO schema_migrations VALUES ({}, '{}', {})", m.version, m.name,
                     dialect_for(engine).now_text);
}

Status failed(const Migration& m, const Status& st) {
  // The live-item index is the one a database can refuse: legacy duplicates.
  const std::string hint =
      st.code() == Code::unique_violation
          ? "; duplicate live schedule items block a unique index: `onceorder legacy "
            "dedup` shows which rows would be kept and `onceorder legacy dedup --apply` "
            "soft-aborts the rest (or, where an audit forbids touching them, `onceorder "
            "migrate --live-index=new-rows-only` protects new rows only)"
          : "";
  return Status(st.code(), fmt::format("migration {} ({}) failed: {}{}", m.version, m.name,
                                       st.message(), hint));
}

constexpr Statement kMaxItemId{"migrate_max_item",
                               "SELECT coalesce(max(item_id), 0) FROM schedule_items"};

// `up`, or its new-rows-only form with the watermark filled in. The caller holds what keeps
// item ids below the watermark from appearing later (SQLite: the write transaction; PostgreSQL:
// see concurrent_watermark).
Result<std::string> up_script(Connection& c, const Migration& m, LiveIndexMode mode) {
  if (mode != LiveIndexMode::new_rows_only || m.up_new_rows_only.empty()) return std::string(m.up);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(kMaxItemId, {}));
  return fmt::format(fmt::runtime(m.up_new_rows_only), fmt::arg("watermark", rows.at(0).i64(0)));
}

// PostgreSQL: what a failed CREATE INDEX CONCURRENTLY leaves behind (a duplicate arrived, the
// build was cancelled, the process died): the index, marked INVALID. Writers keep paying for
// it, and IF NOT EXISTS would take it for done. Invariant I10 reports it until then.
constexpr Statement kIndexInvalid{
    "migrate_index_invalid",
    "SELECT count(*) FROM pg_index x WHERE x.indexrelid = to_regclass($1) AND NOT "
    "(x.indisvalid AND x.indisready)"};

Result<bool> drop_invalid_index(Connection& c, std::string_view index) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(kIndexInvalid, {index}));
  if (rows.at(0).i64(0) == 0) return false;
  OO_RETURN_IF_ERROR(c.exec_script(fmt::format("DROP INDEX CONCURRENTLY IF EXISTS {}", index)));
  return true;
}

// The watermark for a new-rows-only build on PostgreSQL. A transaction that took an item id
// but has not committed yet would show up below the watermark later: SHARE mode waits for the
// writers in flight (and holds new ones off only as long as that takes), so every id above
// max(item_id) is handed out afterwards.
Result<std::string> concurrent_up_script(Connection& c, const Migration& m, LiveIndexMode mode) {
  if (mode != LiveIndexMode::new_rows_only || m.up_new_rows_only.empty()) return std::string(m.up);
  OO_RETURN_IF_ERROR(c.begin(TxMode::write));
  Status st = c.exec_script("LOCK TABLE schedule_items IN SHARE MODE");
  auto script = st.ok() ? up_script(c, m, mode) : Result<std::string>(st);
  if (script.ok()) st = c.commit();
  if (!script.ok() || !st.ok()) {
    c.rollback();
    return script.ok() ? st : script.status();
  }
  return script;
}

// A migration that must run outside a transaction block (Migration::concurrently), on a
// session of its own: the build takes as long as the table is big and first waits for the
// transactions already running, so the pool's statement and lock timeouts do not apply. The
// migration lock stays held on `locked`, which then records the version.
Status run_concurrently(Database& db, Connection& locked, const Migration& m, LiveIndexMode mode) {
  OO_ASSIGN_OR_RETURN(auto session, db.connect_dedicated());
  Connection& c = *session;
  OO_RETURN_IF_ERROR(c.exec_script("SET statement_timeout = 0"));
  OO_RETURN_IF_ERROR(c.exec_script("SET lock_timeout = 0"));
  // A leftover of an earlier failed build is dropped and the build runs again.
  OO_RETURN_IF_ERROR(drop_invalid_index(c, m.index).status());
  OO_ASSIGN_OR_RETURN(std::string up, concurrent_up_script(c, m, mode));
  if (Status st = c.exec_script(up); !st.ok()) {
    // Leave the database as a refused plain build would: no index, the version not applied.
    if (!c.broken()) (void)drop_invalid_index(c, m.index);
    return st;
  }
  OO_RETURN_IF_ERROR(locked.begin(TxMode::write));
  Status st = locked.exec_script(record_sql(db.engine(), m));
  if (st.ok()) st = locked.commit();
  if (!st.ok()) locked.rollback();
  return st;
}

constexpr Statement kIndexDefinition{
    "migrate_index_definition",
    "SELECT x.indisvalid AND x.indisready, pg_get_indexdef(x.indexrelid) FROM pg_index x "
    "WHERE x.indexrelid = to_regclass($1)"};

// The index of an applied concurrent migration, rebuilt when it is INVALID (as it was
// defined, watermark and all) or missing (as `up` says, in the mode asked for now).
Status repair_index(Database& db, const Migration& m, LiveIndexMode mode) {
  OO_ASSIGN_OR_RETURN(auto session, db.connect_dedicated());
  Connection& c = *session;
  OO_ASSIGN_OR_RETURN(auto rows, c.query(kIndexDefinition, {m.index}));
  if (!rows.empty() && rows.at(0).boolean(0)) return Status::Ok();
  OO_RETURN_IF_ERROR(c.exec_script("SET statement_timeout = 0"));
  OO_RETURN_IF_ERROR(c.exec_script("SET lock_timeout = 0"));
  std::string up;
  if (rows.empty()) {
    OO_ASSIGN_OR_RETURN(up, concurrent_up_script(c, m, mode));
  } else {
    // pg_get_indexdef gives "CREATE [UNIQUE ]INDEX name ON …": build it the same way, again.
    up = rows.at(0).text(1);
    const auto at = up.find("INDEX ");
    if (at == std::string::npos) return Status(Code::internal, "unexpected index definition");
    up.insert(at + 6, "CONCURRENTLY ");
    OO_RETURN_IF_ERROR(drop_invalid_index(c, m.index).status());
  }
  if (Status st = c.exec_script(up); !st.ok()) {
    if (!c.broken()) (void)drop_invalid_index(c, m.index);
    return st;
  }
  return Status::Ok();
}

// Migration 22's feed orders events by their transaction's id: after a restore into a new
// cluster (whose ids start low again) new events would sort before the stored ones and a reader
// past those would never see them. Raising the clock's shift keeps them after.
constexpr int kEventsVersion = 22;
Status rebase_event_clock(Connection& c, int version) {
  if (version < kEventsVersion) return Status::Ok();
  OO_RETURN_IF_ERROR(c.begin(TxMode::write));
  auto raised = EventsStore(dialect_for(c.engine())).rebase_clock(c);
  Status st = raised.ok() ? c.commit() : raised.status();
  if (!st.ok()) {
    c.rollback();
    return st;
  }
  if (*raised)
    spdlog::warn("events: the feed's clock was raised past the stored events (a restore?)");
  return Status::Ok();
}

}  // namespace

int latest_schema_version(Engine engine) {
  auto list = dialect_for(engine).migrations;
  return list.empty() ? 0 : list.back().version;
}

Result<int> current_schema_version(Database& db) {
  OO_ASSIGN_OR_RETURN(auto conn, db.acquire(Clock::now() + std::chrono::seconds(5)));
  return read_version(*conn);
}

Result<int> migrate(Database& db, int target) { return migrate(db, MigrateOptions{target}); }

Result<int> migrate(Database& db, const MigrateOptions& options) {
  return with_migration_lock(db, [&](Connection& c) -> Result<int> {
    int version = 0;
    for (const Migration& m : db.dialect().migrations) {
      if (m.version > options.target) break;
      // Each migration is its own transaction; the version is re-read under the write
      // lock so that a process that lost the race applies nothing twice.
      OO_RETURN_IF_ERROR(c.begin(TxMode::write));
      auto current = read_version(c);
      if (current.ok() && *current == 0) {
        // Made by the first run only: on a migrated database a role that may not create
        // (serve's own, docs/POSTGRESQL.md) starts without any DDL.
        if (Status st = c.query(kCreateTable, {}).status(); !st.ok()) current = st;
      }
      if (!current.ok()) {
        c.rollback();
        return current.status();
      }
      version = *current;
      if (m.version <= version) {
        c.rollback();
        if (options.repair_indexes && m.concurrently) {
          if (Status st = repair_index(db, m, options.live_index); !st.ok()) return failed(m, st);
        }
        continue;
      }
      if (m.concurrently) {
        // Outside this transaction; the migration lock (its own connection's open
        // transaction) keeps other migrators out meanwhile.
        if (Status st = c.commit(); !st.ok()) {
          c.rollback();
          return st;
        }
        if (Status st = run_concurrently(db, c, m, options.live_index); !st.ok())
          return failed(m, st);
        version = m.version;
        continue;
      }
      auto up = up_script(c, m, options.live_index);
      Status st = up.ok() ? run_step(c, *up, record_sql(db.engine(), m)) : up.status();
      if (st.ok()) st = c.commit();
      if (!st.ok()) {
        c.rollback();
        return failed(m, st);
      }
      version = m.version;
    }
    OO_RETURN_IF_ERROR(rebase_event_clock(c, version));
    return version;
  });
}

Status migrate_down(Database& db, int target) {
  return with_migration_lock(
             db,
             [&](Connection& c) -> Result<int> {
               auto list = db.dialect().migrations;
               for (auto it = list.rbegin(); it != list.rend(); ++it) {
                 OO_ASSIGN_OR_RETURN(int current, read_version(c));
                 if (it->version > current || it->version <= target) continue;
                 // A step that drops a table locks it and the tables its keys reference,
                 // one by one: a reader of both (the server's invariant check) can deadlock
                 // with it. The step is all or nothing, so it is simply run again.
                 Status st;
                 for (int attempt = 0; attempt < 5; ++attempt) {
                   OO_RETURN_IF_ERROR(c.begin(TxMode::write));
                   st = run_step(c, it->down,
                                 fmt::format("DELETE FROM schema_migrations WHERE version = {}",
                                             it->version));
                   if (st.ok()) st = c.commit();
                   if (st.ok()) break;
                   c.rollback();
                   if (st.code() != Code::deadlock) return st;
                 }
                 if (!st.ok()) return st;
               }
               return target;
             })
      .status();
}

}  // namespace onceorder::store
