#include "store/sqlite/sqlite_connection.hpp"

#include <sqlite3.h>

#include <filesystem>
#include <unordered_map>

#include "onceorder/core/number_format.hpp"
#include "store/sqlite/writer_turns.hpp"

namespace onceorder::store::sqlite {
namespace {

Code classify(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Code::lock_timeout;
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
        return Code::unique_violation;
      if (rc == SQLITE_CONSTRAINT_CHECK) return Code::check_violation;
      if (rc == SQLITE_CONSTRAINT_FOREIGNKEY || rc == SQLITE_CONSTRAINT_TRIGGER)
        return Code::reference_violation;
      return Code::conflict;
    case SQLITE_INTERRUPT:  // cancelled at its deadline (bound_statements)
      return Code::busy;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FULL:
      return Code::unavailable;
    default:
      return Code::internal;
  }
}

// oo_format_number(value, radix, width): the same rendering as core's format_number,
// so that SQL on both engines can store the number text in the statement that issues it.
void format_number_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto text = format_number(sqlite3_value_int64(argv[0]), sqlite3_value_int(argv[1]),
                                  sqlite3_value_int(argv[2]));
  sqlite3_result_text(ctx, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

class SqliteConnection final : public Connection {
 public:
  SqliteConnection(sqlite3* db, std::shared_ptr<WriterTurns> turns,
                   std::chrono::milliseconds lock_timeout)
      : db_(db), turns_(std::move(turns)), lock_timeout_(lock_timeout) {}
  ~SqliteConnection() override {
    end_turn();
    for (auto& [name, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  Engine engine() const override { return Engine::sqlite; }

  // A write transaction waits for its turn among this process's writers (WriterTurns), then
  // BEGIN IMMEDIATE waits (busy_timeout) for another process's write lock.
  bool begin_may_wait(TxMode mode) const override { return mode == TxMode::write; }
  Status do_begin(TxMode mode) override {
    if (mode == TxMode::write) {
      if (!turns_->take(Clock::now() + lock_timeout_)) {
        return Status(Code::lock_timeout,
                      "sqlite: another writer of this process held the database past the lock "
                      "timeout");
      }
      has_turn_ = true;
    }
    Status st = exec_script(mode == TxMode::write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
    if (!st.ok()) {
      end_turn();
      return st;
    }
    in_tx_ = true;
    return Status::Ok();
  }
  Status do_commit() override {
    bound_statements(std::nullopt);  // the bound is the transaction's; its COMMIT always runs
    Status st = exec_script("COMMIT");
    if (st.ok()) {
      in_tx_ = false;
      end_turn();
    }
    return st;
  }
  void rollback() override {
    bound_statements(std::nullopt);
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    in_tx_ = false;
    end_turn();
  }

  // SQLite has no statement timeout: a progress handler, called every kProgressSteps virtual
  // machine steps (microseconds of work), interrupts the statement once `until` has passed.
  void bound_statements(std::optional<Clock::time_point> until) override {
    if (until == until_) return;
    until_ = until;
    if (until_) {
      sqlite3_progress_handler(db_, kProgressSteps, &SqliteConnection::past_bound, this);
    } else {
      sqlite3_progress_handler(db_, 0, nullptr, nullptr);
    }
  }
  bool in_transaction() const override { return in_tx_; }
  bool broken() const override { return broken_; }

  Result<Rows> do_query(const Statement& s, std::span<const Param> params, Then then) override {
    auto rows = run(s, params);
    if (rows.ok() && then == Then::commit) {
      Status st = commit();
      if (!st.ok()) return st;
    }
    if (rows.ok() && then == Then::with_next) return Rows{};
    return rows;
  }

  Status exec_script(std::string_view sql) override {
    char* err = nullptr;
    const std::string text(sql);
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
    if (rc == SQLITE_OK) return Status::Ok();
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return fail(rc, msg);
  }

  Status lock_migrations() override { return Status::Ok(); }
  void unlock_migrations() override {}

 private:
  Status fail(int rc, const std::string& msg) {
    const Code code = classify(sqlite3_extended_errcode(db_) ? sqlite3_extended_errcode(db_) : rc);
    if (code == Code::unavailable) broken_ = true;
    return Status(code, "sqlite: " + msg);
  }

  Result<sqlite3_stmt*> prepared(const Statement& s) {
    if (auto it = cache_.find(s.name); it != cache_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(db_, s.sql.data(), static_cast<int>(s.sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return fail(rc, std::string(s.name) + ": " + sqlite3_errmsg(db_));
    cache_.emplace(s.name, stmt);
    return stmt;
  }

  Result<Rows> run(const Statement& s, std::span<const Param> params) {
    OO_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, prepared(s));
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (size_t i = 0; i < params.size(); ++i) {
      const int idx = static_cast<int>(i + 1);
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::nullptr_t>)
              sqlite3_bind_null(stmt, idx);
            else if constexpr (std::is_same_v<V, std::int64_t>)
              sqlite3_bind_int64(stmt, idx, v);
            else
              sqlite3_bind_text(stmt, idx, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
          },
          params[i]);
    }
    Rows rows;
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        Status st = fail(rc, std::string(s.name) + ": " + sqlite3_errmsg(db_));
        sqlite3_reset(stmt);
        return st;
      }
      const int n = sqlite3_column_count(stmt);
      std::vector<std::optional<std::string>> cols;
      cols.reserve(static_cast<size_t>(n));
      for (int c = 0; c < n; ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
          cols.emplace_back(std::nullopt);
        } else {
          const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
          cols.emplace_back(std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt, c))));
        }
      }
      rows.emplace_back(std::move(cols));
    }
    sqlite3_reset(stmt);
    return rows;
  }

  void end_turn() {
    if (!has_turn_) return;
    has_turn_ = false;
    turns_->give_back();
  }

  static constexpr int kProgressSteps = 1000;
  static int past_bound(void* self) {
    const auto& until = static_cast<SqliteConnection*>(self)->until_;
    return until && Clock::now() >= *until ? 1 : 0;
  }

  sqlite3* db_;
  const std::shared_ptr<WriterTurns> turns_;
  const std::chrono::milliseconds lock_timeout_;
  bool has_turn_ = false;                   // between a write BEGIN and its end
  std::optional<Clock::time_point> until_;  // bound_statements
  bool in_tx_ = false;
  bool broken_ = false;
  std::unordered_map<std::string_view, sqlite3_stmt*> cache_;
};

}  // namespace

Result<std::unique_ptr<Connection>> connect(const std::string& path,
                                            const DatabaseOptions& options) {
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status(Code::unavailable, "cannot open SQLite database '" + path + "': " + msg);
  }
  sqlite3_busy_timeout(db, static_cast<int>(options.lock_timeout.count()));
  sqlite3_create_function_v2(db, "oo_format_number", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                             format_number_fn, nullptr, nullptr, nullptr);
  auto conn = std::make_unique<SqliteConnection>(db, WriterTurns::of(path), options.lock_timeout);
  // FULL sync: a committed number survives power loss, not only a process crash.
  Status st = conn->exec_script(
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
  if (!st.ok()) {
    return Status(Code::unavailable, "cannot use SQLite database '" + path + "': " + st.message());
  }
  return std::unique_ptr<Connection>(std::move(conn));
}

}  // namespace onceorder::store::sqlite
