// The engine-neutral store: a pool of database connections, one small Connection type
// per engine (SQLite, PostgreSQL), and `transact`, which runs a whole transaction and
// re-runs all of it on deadlock, serialization failure or lock timeout.
//
// Thread-safety: a Database (and its pool and metrics) is safe to share between threads.
// A Connection belongs to one thread at a time: the pool hands it out exclusively.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "onceorder/core/audit_types.hpp"
#include "onceorder/core/db_url.hpp"
#include "onceorder/core/status.hpp"

namespace onceorder::store {

using Clock = std::chrono::steady_clock;

// A bound parameter. String views must outlive the call that binds them.
using Param = std::variant<std::nullptr_t, std::int64_t, std::string_view>;

inline Param nullable(const std::optional<std::string>& s) {
  return s ? Param(std::string_view(*s)) : Param(nullptr);
}

// One result row in text form (both engines answer in text).
class Row {
 public:
  explicit Row(std::vector<std::optional<std::string>> cols) : cols_(std::move(cols)) {}
  size_t size() const { return cols_.size(); }
  bool is_null(size_t i) const { return !cols_.at(i).has_value(); }
  const std::string& text(size_t i) const;  // "" for NULL
  std::int64_t i64(size_t i) const;         // 0 for NULL
  bool boolean(size_t i) const;             // PostgreSQL "t"/"f", SQLite 1/0

 private:
  std::vector<std::optional<std::string>> cols_;
};
using Rows = std::vector<Row>;

// The first column of every row as an integer: the ids or keys a statement returned.
inline std::vector<std::int64_t> first_column_i64(const Rows& rows) {
  std::vector<std::int64_t> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(r.i64(0));
  return out;
}

// A statement with static storage: its name keys the per-connection prepared-statement
// cache (behind a transaction-mode pooler PostgreSQL sends it unnamed instead). SQL is
// engine-specific and lives in that engine's directory.
struct Statement {
  std::string_view name;
  std::string_view sql;
  // True for a statement that may wait for another transaction's row locks (a locking read):
  // its time counts as lock wait in CallTimes.
  bool may_wait = false;
};

// Where a connection's time went (seed 004's breakdown of a placement): time in database
// calls, and of it the calls that may wait for another transaction's locks
// (Statement::may_wait, and SQLite's BEGIN IMMEDIATE, which waits for the write lock).
struct CallTimes {
  Clock::duration in_calls{};
  Clock::duration waiting{};
  CallTimes& operator+=(const CallTimes& o) {
    in_calls += o.in_calls;
    waiting += o.waiting;
    return *this;
  }
  friend CallTimes operator-(CallTimes a, const CallTimes& b) {
    a.in_calls -= b.in_calls;
    a.waiting -= b.waiting;
    return a;
  }
};

enum class TxMode { read, write };

// What `query` does after the statement: `commit` sends COMMIT in the same round trip
// where the engine allows (PostgreSQL pipeline), so a one-statement transaction costs
// one round trip. After an ok answer with Then::commit the transaction has committed.
// `with_next` holds the statement back and sends it in the round trip of the transaction's
// next statement (or COMMIT), for a statement whose rows nobody reads (a transaction's
// settings): it answers no rows, and an error it meets is the next statement's. Engines
// without round trips (SQLite) run it at once.
enum class Then { stay, commit, with_next };

// Called on the connection's thread before each statement it sends (with the statement's
// name) and before COMMIT ("COMMIT"). Tests set it to pause a session at every statement
// boundary (tests/isolation); it is empty, and costs one branch, everywhere else.
using StatementHook = std::function<void(std::string_view statement)>;

// A statement with its parameters, for Connection::open_next (the views must outlive the call).
struct Call {
  Statement stmt;
  std::vector<Param> params;
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Engine engine() const = 0;

  Status begin(TxMode mode) {
    const auto started = Clock::now();
    Status st = do_begin(mode);
    count(Clock::now() - started, begin_may_wait(mode));
    return st;
  }
  Status commit() {
    before_statement("COMMIT");
    const auto started = Clock::now();
    Status st = do_commit();
    count(Clock::now() - started, false);
    return st;
  }
  // The time this connection has spent in database calls since it opened.
  const CallTimes& call_times() const { return times_; }
  virtual void rollback() = 0;  // never fails: a connection it cannot roll back is broken()
  virtual bool in_transaction() const = 0;
  // Bounds every statement of the transaction begun next (called between begin() and its
  // first statement) to end by `until`; nullopt: no bound but the session's. A statement
  // still running then is cancelled and fails with Code::busy. `transact` bounds each read
  // transaction by its deadline, so no read outlives the request that asked for it.
  virtual void bound_statements(std::optional<Clock::time_point> until) { (void)until; }
  // Stops waiting for the server's answers at `until` (called between begin() and the
  // transaction's first statement; begin() clears it): a server cut off by a partition, or
  // frozen, never answers, and its statement timer cannot reach us. Past `until` the
  // connection is dropped, never cancelled (a cancel needs the server that stopped
  // answering), and the call fails with Code::unavailable; if a COMMIT was sent, its outcome
  // is unknown. An engine without a network does nothing.
  virtual void answer_by(std::optional<Clock::time_point> until) { (void)until; }
  // Lost its server or its state is unknown: the pool drops it.
  virtual bool broken() const = 0;
  // True when the last failure broke the connection at a point where nothing of the
  // current transaction can have run, let alone committed: it was found dead before the
  // transaction's first statement was sent (a server restart closes idle connections), or
  // that first statement failed without a COMMIT in the same round trip. `transact` then
  // replays the transaction on a new connection instead of failing the request.
  virtual bool lost_before_commit() const { return false; }

  Result<Rows> query(const Statement& stmt, std::span<const Param> params, Then then = Then::stay) {
    before_statement(stmt.name);
    const auto started = Clock::now();
    auto rows = do_query(stmt, params, then);
    count(Clock::now() - started, stmt.may_wait);
    return rows;
  }
  Result<Rows> query(const Statement& stmt, std::initializer_list<Param> params,
                     Then then = Then::stay) {
    return query(stmt, std::span<const Param>(params.begin(), params.size()), then);
  }
  // Several statements of SQL text without parameters (migrations, session setup).
  virtual Status exec_script(std::string_view sql) = 0;

  // Serializes schema migrations between processes. PostgreSQL: a transaction-scoped
  // advisory lock, held by a transaction this connection keeps open until
  // unlock_migrations (so it works through a transaction-mode pooler too, and a process that
  // dies releases it with its connection); the migrations themselves run on other
  // connections. SQLite takes its write lock per migration instead: no-ops there.
  virtual Status lock_migrations() = 0;
  virtual void unlock_migrations() = 0;

  // Builds the next transaction's first statements, and hands them to `send` (with a
  // token, unique in the process) while the views they hold are alive; sends nothing by not
  // calling it.
  using SendOpening = std::function<void(std::uint64_t token, std::span<const Call> calls)>;
  using Opener = std::function<void(const SendOpening& send)>;
  // Opens the next transaction behind this one's COMMIT. The next statement sent with
  // Then::commit runs, then `opener` is called (PostgreSQL: as soon as that statement's
  // answer is in, while the COMMIT runs: what it builds may depend on what happened
  // meanwhile), and what it sends follows the COMMIT at once: BEGIN and the calls (all but
  // the last held back as with Then::with_next; the last one's rows kept). Once the COMMIT
  // succeeded the connection is opened_for(token) and goes back to the pool under it
  // (Database::acquire): the next transaction begun on it whose first statement is exactly
  // the last call, with the others held before it, gets their answer without a round trip;
  // anything else rolls the opening back first. If the COMMIT fails the opening is rolled back
  // with the transaction. Returns false, registering nothing, where the engine cannot (SQLite;
  // PostgreSQL behind a transaction-mode pooler).
  virtual bool open_next(Opener opener) {
    (void)opener;
    return false;
  }
  // The token of an opening waiting on this connection (0: none).
  virtual std::uint64_t opened_for() const { return 0; }

  void set_statement_hook(StatementHook hook) { hook_ = std::move(hook); }

 protected:
  virtual Status do_begin(TxMode mode) = 0;
  // True where beginning a transaction in `mode` waits for another's lock.
  virtual bool begin_may_wait(TxMode mode) const {
    (void)mode;
    return false;
  }
  virtual Status do_commit() = 0;
  virtual Result<Rows> do_query(const Statement& stmt, std::span<const Param> params,
                                Then then) = 0;

 private:
  void before_statement(std::string_view what) {
    if (hook_) hook_(what);
  }
  void count(Clock::duration took, bool waiting) {
    times_.in_calls += took;
    if (waiting) times_.waiting += took;
  }
  StatementHook hook_;
  CallTimes times_;
};

struct DatabaseOptions {
  int pool_size = 8;
  // How long one statement may wait for a row lock before the transaction is retried.
  std::chrono::milliseconds lock_timeout{2000};
  std::chrono::milliseconds statement_timeout{30000};
  // PostgreSQL behind a transaction-mode pooler (DbUrl::transaction_pooler, set by
  // Database::open): unnamed statements, and the timeouts set in every transaction
  // (SET LOCAL) instead of once per connection.
  bool transaction_pooler = false;
  // Installed on every connection the Database opens (tests only).
  StatementHook statement_hook{};
};

// Retries per cause, and pool occupancy, for /metrics.
struct StoreMetrics {
  // Transactions asked of transact (a re-run is not another one): the retry rate's base.
  std::atomic<std::uint64_t> transactions{0};
  std::atomic<std::uint64_t> retries_deadlock{0};
  std::atomic<std::uint64_t> retries_lock_timeout{0};
  std::atomic<std::uint64_t> retries_serialization{0};
  std::atomic<std::uint64_t> retries_requested{0};
  std::atomic<std::uint64_t> gave_up_busy{0};
  // Transactions replayed on a new connection after theirs was found dead (lost_before_commit).
  std::atomic<std::uint64_t> reconnects{0};
  // Connections found dead and dropped from the pool: the server restarted, failed over or
  // went away (what a process remembers of recent commits is doubtful from then on).
  std::atomic<std::uint64_t> connections_dropped{0};
  // Openings (Connection::open_next) taken by their transaction, and rolled back unused.
  std::atomic<std::uint64_t> openings_taken{0};
  std::atomic<std::uint64_t> openings_discarded{0};
  std::atomic<int> connections_in_use{0};
};

class Database;
struct Dialect;  // store/dialect.hpp: the engine's statements and capabilities

// A connection borrowed from the pool; returns it (or drops it if broken) on destruction.
class PooledConnection {
 public:
  PooledConnection(Database* db, std::unique_ptr<Connection> conn)
      : db_(db), conn_(std::move(conn)) {}
  PooledConnection(PooledConnection&&) noexcept = default;
  PooledConnection& operator=(PooledConnection&&) noexcept = default;
  ~PooledConnection();
  Connection& operator*() { return *conn_; }
  Connection* operator->() { return conn_.get(); }

 private:
  Database* db_;
  std::unique_ptr<Connection> conn_;
};

class Database {
 public:
  using Factory = std::function<Result<std::unique_ptr<Connection>>()>;

  // Opens (but does not migrate) the database named by `url`. Connects once to prove
  // the database is reachable: a bad path or server is reported here.
  static Result<std::unique_ptr<Database>> open(const DbUrl& url, DatabaseOptions options = {});

  Database(Engine engine, DatabaseOptions options, Factory factory);
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Engine engine() const { return engine_; }
  const Dialect& dialect() const;
  const DatabaseOptions& options() const { return options_; }
  StoreMetrics& metrics() { return metrics_; }

  // Waits until `deadline` for a free connection: Code::busy if none frees up, and
  // Code::unavailable if a new one could not be opened by then (the attempt goes on, and
  // what it opens joins the pool). `fresh`
  // prefers a new connection to an idle one (when the pool has room): after one connection
  // was found dead, the idle ones may well be dead too. `opened`: the connection opened for
  // that token (Connection::open_next) if it is still there, else any.
  Result<PooledConnection> acquire(Clock::time_point deadline, bool fresh = false,
                                   std::uint64_t opened = 0);
  // Rolls back the opening of `token` if no transaction took it, and frees its connection
  // (a no-op once taken). Whoever was handed a token calls it when done.
  void discard_opened(std::uint64_t token);
  // A connection outside the pool (e.g. to hold leadership for the process's lifetime).
  Result<std::unique_ptr<Connection>> connect_dedicated() { return factory_(); }

 private:
  friend class PooledConnection;
  void release(std::unique_ptr<Connection> conn);
  Result<PooledConnection> open_within(Clock::time_point deadline);

  struct Pool;
  Engine engine_;
  DatabaseOptions options_;
  Factory factory_;
  std::shared_ptr<Pool> pool_;
  StoreMetrics metrics_;
};

struct TxOptions {
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(5);
  int max_attempts = 3;
  TxMode mode = TxMode::write;
  // Tests: called before the pause between two attempts (the connection is back by then).
  std::function<void()> before_pause{};
  // The first attempt runs on the connection opened for this token (Connection::open_next),
  // if it is still there.
  std::uint64_t opened = 0;
  // Where set, every attempt adds what it spent in database calls (seed 004's breakdown).
  CallTimes* spent = nullptr;
};

// The audit row of the action this thread is carrying out (API.md "The audit trail"). While
// one is alive, the first write transaction `transact` commits on this thread carries the row,
// inserted right after BEGIN: it commits with that transaction's effect (however the body
// commits) or not at all, and an attempt rolled back takes it back. The HTTP layer sets one
// around an audited handler; work a handler hands to another thread does not see it. One per
// thread at a time.
class AuditInTransaction {
 public:
  explicit AuditInTransaction(const ActionRecord& row);
  ~AuditInTransaction();
  AuditInTransaction(const AuditInTransaction&) = delete;
  AuditInTransaction& operator=(const AuditInTransaction&) = delete;

  // The row's action_id once a committed transaction carried it; 0 before.
  std::int64_t action_id() const { return action_id_; }

  // The thread's row still waiting for a write transaction, or nullptr.
  static AuditInTransaction* waiting();
  const ActionRecord& row() const { return row_; }
  void committed(std::int64_t action_id) { action_id_ = action_id; }

 private:
  const ActionRecord& row_;
  std::int64_t action_id_ = 0;
};

// A request's transaction: up to three attempts within `deadline`.
inline TxOptions write_tx(Clock::time_point deadline) { return {deadline, 3, TxMode::write, {}}; }
inline TxOptions read_tx(Clock::time_point deadline) { return {deadline, 3, TxMode::read, {}}; }

// Runs `body` in one transaction and commits it. On a retryable failure (deadlock, lock
// timeout, serialization failure, Code::retry_transaction) everything is rolled back and
// the *whole* body runs again, at most `max_attempts` times within the deadline; then
// Code::busy. A connection found dead before anything of the transaction could commit
// (Connection::lost_before_commit) is replaced and the transaction run again on the new
// one, at most twice and not counted as an attempt. Any other error rolls back and is
// returned as is.
template <class T>
Result<T> transact(Database& db, const TxOptions& options,
                   const std::function<Result<T>(Connection&)>& body);

// Implementation detail of transact: the loop, typed on Status.
Status transact_status(Database& db, const TxOptions& options,
                       const std::function<Status(Connection&)>& body);

template <class T>
Result<T> transact(Database& db, const TxOptions& options,
                   const std::function<Result<T>(Connection&)>& body) {
  std::optional<T> out;
  Status st = transact_status(db, options, [&](Connection& c) -> Status {
    out.reset();
    Result<T> r = body(c);
    if (!r.ok()) return r.status();
    out.emplace(std::move(r).value());
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return std::move(*out);
}

// Applies every pending migration of the engine up to `target` (safe when several
// processes start at once). Returns the schema version now in place. A migration that
// fails leaves the versions before it applied and says which one failed and why.
Result<int> migrate(Database& db, int target = 1 << 30);

// How migration 3 builds the live-item index (docs/CUTOVER.md "An audit forbids touching
// old rows"). `full`: every live item, as the design says; refused while duplicates exist.
// `new_rows_only`: only items created after the migration (item_id above the largest at that
// moment), so that duplicates an audit forbids touching stay as they are. Only a migration
// that builds the index reads it; an index already in place is kept as it is.
enum class LiveIndexMode { full, new_rows_only };
struct MigrateOptions {
  int target = 1 << 30;
  LiveIndexMode live_index = LiveIndexMode::full;
  // PostgreSQL: also rebuild an index of an applied concurrent migration that is INVALID
  // (a failed concurrent rebuild, invariant I10) or missing. `onceorder migrate` sets it; the
  // migration every other command runs first does not (`check` must be able to report).
  bool repair_indexes = false;
};
Result<int> migrate(Database& db, const MigrateOptions& options);
// Rolls back to `version` with the migrations' down scripts (tests and operators).
Status migrate_down(Database& db, int version);
// Latest version this build knows, and the version the database has.
int latest_schema_version(Engine engine);
Result<int> current_schema_version(Database& db);

}  // namespace onceorder::store
