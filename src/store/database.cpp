#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "onceorder/store/store.hpp"
#include "store/audit_store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

const std::string& Row::text(size_t i) const {
  static const std::string kEmpty;
  const auto& c = cols_.at(i);
  return c ? *c : kEmpty;
}

std::int64_t Row::i64(size_t i) const {
  const auto& c = cols_.at(i);
  return c && !c->empty() ? std::stoll(*c) : 0;
}

bool Row::boolean(size_t i) const {
  const auto& c = cols_.at(i);
  return c && (*c == "t" || *c == "1" || *c == "true");
}

// Idle connections and how many exist; guarded by `mu`.
struct Database::Pool {
  std::mutex mu;
  std::condition_variable freed;
  std::vector<std::unique_ptr<Connection>> idle;
  // Connections with an opening waiting for its transaction, by token (not idle, still open).
  std::map<std::uint64_t, std::unique_ptr<Connection>> opened;
  int open = 0;
};

Database::Database(Engine engine, DatabaseOptions options, Factory factory)
    : engine_(engine),
      options_(options),
      factory_(std::move(factory)),
      pool_(std::make_shared<Pool>()) {}

const Dialect& Database::dialect() const { return dialect_for(engine_); }

Result<std::unique_ptr<Database>> Database::open(const DbUrl& url, DatabaseOptions options) {
  options.transaction_pooler = options.transaction_pooler || url.transaction_pooler;
  Factory factory = [url, options]() -> Result<std::unique_ptr<Connection>> {
    auto conn = dialect_for(url.engine).connect(url.target, options);
    if (conn.ok() && options.statement_hook) (*conn)->set_statement_hook(options.statement_hook);
    return conn;
  };
  auto first = factory();
  if (!first.ok()) return first.status();
  auto db = std::make_unique<Database>(url.engine, options, std::move(factory));
  db->pool_->open = 1;
  db->pool_->idle.push_back(std::move(first).value());
  return db;
}

Result<PooledConnection> Database::acquire(Clock::time_point deadline, bool fresh,
                                           std::uint64_t opened) {
  std::unique_lock lock(pool_->mu);
  if (auto it = pool_->opened.find(opened); opened != 0 && it != pool_->opened.end()) {
    auto conn = std::move(it->second);
    pool_->opened.erase(it);
    metrics_.connections_in_use.fetch_add(1);
    metrics_.openings_taken.fetch_add(1);
    return PooledConnection(this, std::move(conn));
  }
  for (;;) {
    if (!pool_->idle.empty() && !(fresh && pool_->open < options_.pool_size)) {
      auto conn = std::move(pool_->idle.back());
      pool_->idle.pop_back();
      metrics_.connections_in_use.fetch_add(1);
      return PooledConnection(this, std::move(conn));
    }
    if (pool_->open < options_.pool_size) {
      ++pool_->open;
      lock.unlock();
      return open_within(deadline);
    }
    if (pool_->freed.wait_until(lock, deadline) == std::cv_status::timeout && pool_->idle.empty() &&
        pool_->open >= options_.pool_size) {
      return Status(Code::busy, "no database connection became free within the deadline");
    }
  }
}

// A new connection for the caller, waited for until `deadline` at most: with a database host
// cut off by a partition one attempt can last the URL's connect_timeout for each host it
// lists. Past the deadline the attempt goes on, on its own thread, and what it opens joins
// the pool for the next caller (its slot in `open` is held until then).
Result<PooledConnection> Database::open_within(Clock::time_point deadline) {
  struct Attempt {
    std::mutex mu;
    std::condition_variable done;
    std::optional<Result<std::unique_ptr<Connection>>> result;
    bool abandoned = false;
  };
  auto attempt = std::make_shared<Attempt>();
  std::thread([attempt, factory = factory_, pool = pool_] {
    auto conn = factory();
    std::unique_lock lock(attempt->mu);
    if (!attempt->abandoned) {
      attempt->result.emplace(std::move(conn));
      attempt->done.notify_one();
      return;
    }
    lock.unlock();
    std::lock_guard pool_lock(pool->mu);
    if (conn.ok())
      pool->idle.push_back(std::move(conn).value());
    else
      --pool->open;
    pool->freed.notify_one();
  }).detach();

  std::unique_lock lock(attempt->mu);
  if (!attempt->done.wait_until(lock, deadline, [&] { return attempt->result.has_value(); })) {
    attempt->abandoned = true;
    return Status(Code::unavailable,
                  "no new database connection could be opened within the deadline");
  }
  auto conn = std::move(*attempt->result);
  if (!conn.ok()) {
    std::lock_guard pool_lock(pool_->mu);
    --pool_->open;
    pool_->freed.notify_one();
    return conn.status();
  }
  metrics_.connections_in_use.fetch_add(1);
  return PooledConnection(this, std::move(conn).value());
}

void Database::discard_opened(std::uint64_t token) {
  std::unique_ptr<Connection> conn;
  {
    std::lock_guard lock(pool_->mu);
    auto it = pool_->opened.find(token);
    if (it == pool_->opened.end()) return;
    conn = std::move(it->second);
    pool_->opened.erase(it);
  }
  conn->rollback();  // the opening, never read
  metrics_.openings_discarded.fetch_add(1);
  metrics_.connections_in_use.fetch_add(1);
  release(std::move(conn));
}

void Database::release(std::unique_ptr<Connection> conn) {
  metrics_.connections_in_use.fetch_sub(1);
  if (conn->in_transaction()) conn->rollback();  // a body that forgot: never leak a tx
  std::lock_guard lock(pool_->mu);
  if (const std::uint64_t token = conn->opened_for(); token != 0 && !conn->broken()) {
    pool_->opened.emplace(token, std::move(conn));
    return;
  }
  if (conn->broken()) {
    --pool_->open;
    metrics_.connections_dropped.fetch_add(1);
  } else {
    pool_->idle.push_back(std::move(conn));
  }
  pool_->freed.notify_one();
}

PooledConnection::~PooledConnection() {
  if (db_ && conn_) db_->release(std::move(conn_));
}

namespace {

void count_retry(StoreMetrics& m, Code code) {
  switch (code) {
    case Code::deadlock:
      m.retries_deadlock.fetch_add(1);
      break;
    case Code::lock_timeout:
      m.retries_lock_timeout.fetch_add(1);
      break;
    case Code::serialization_failure:
      m.retries_serialization.fetch_add(1);
      break;
    default:
      m.retries_requested.fetch_add(1);
      break;
  }
}

// Full jitter keeps two colliding transactions from colliding again in lock step.
Clock::duration backoff(int attempt) {
  thread_local std::mt19937 rng(std::random_device{}());
  const int cap_ms = std::min(50, 5 << attempt);
  return std::chrono::milliseconds(std::uniform_int_distribution<int>(1, cap_ms)(rng));
}

}  // namespace

namespace {
thread_local AuditInTransaction* t_audit = nullptr;
}  // namespace

AuditInTransaction::AuditInTransaction(const ActionRecord& row) : row_(row) { t_audit = this; }

AuditInTransaction::~AuditInTransaction() {
  if (t_audit == this) t_audit = nullptr;
}

AuditInTransaction* AuditInTransaction::waiting() {
  return t_audit && t_audit->action_id_ == 0 ? t_audit : nullptr;
}

namespace {

constexpr std::string_view kReadPastDeadline =
    "the read did not finish within the request's deadline and was cancelled; nothing was "
    "changed: narrow it (filters, a smaller limit) or retry";

// How long past the deadline a transaction still waits for a server that does not answer
// (Connection::answer_by): reads are cancelled by the server at the deadline and their answer
// is on its way; a write may finish what it began (writes are not cut at the deadline). Past
// it the server is taken for cut off, and the connection dropped.
constexpr auto kUnansweredPastDeadline = std::chrono::seconds(2);

// What an attempt spends in the database, added when it ends (TxOptions::spent).
struct SpentInAttempt {
  CallTimes* out;
  const Connection& c;
  CallTimes before;
  ~SpentInAttempt() {
    if (out) *out += c.call_times() - before;
  }
};

}  // namespace

Status transact_status(Database& db, const TxOptions& options,
                       const std::function<Status(Connection&)>& body) {
  // Twice: a restart leaves every idle connection dead, and the new connection taken after
  // the first dead one may itself meet the server going away once more.
  constexpr int kMaxReconnects = 2;
  constexpr auto kDeadlineSlack = std::chrono::milliseconds(10);
  int reconnects = 0;
  bool fresh = false;
  Status last;
  db.metrics().transactions.fetch_add(1, std::memory_order_relaxed);
  AuditInTransaction* audit =
      options.mode == TxMode::write ? AuditInTransaction::waiting() : nullptr;
  for (int attempt = 1; attempt <= options.max_attempts; ++attempt) {
    Status st;
    bool lost_before_commit = false;
    {
      // The connection goes back to the pool (or is dropped, when dead) at the end of this
      // block: a retry's pause below holds neither a connection nor a transaction.
      auto conn = db.acquire(options.deadline, fresh, attempt == 1 ? options.opened : 0);
      if (!conn.ok()) return conn.status();
      Connection& c = **conn;
      const SpentInAttempt spent{options.spent, c, c.call_times()};
      st = c.begin(options.mode);
      const bool bounded = options.mode == TxMode::read;
      if (st.ok()) c.bound_statements(bounded ? std::optional(options.deadline) : std::nullopt);
      if (st.ok()) c.answer_by(options.deadline + kUnansweredPastDeadline);
      std::int64_t audit_id = 0;
      if (st.ok() && audit) {
        auto recorded = AuditStore(db.dialect()).record(c, audit->row());
        st = recorded.status();
        if (recorded.ok()) audit_id = *recorded;
      }
      if (st.ok()) st = body(c);
      if (st.ok() && c.in_transaction()) st = c.commit();
      if (st.ok()) {
        if (audit) audit->committed(audit_id);
        return st;
      }
      c.rollback();
      lost_before_commit = c.lost_before_commit();
      // A read cancelled at its deadline: say so, rather than the engine's words. The
      // engine's timer and this clock differ by a little (kDeadlineSlack).
      if (bounded && st.code() == Code::busy && Clock::now() + kDeadlineSlack >= options.deadline) {
        return Status(Code::busy, std::string(kReadPastDeadline));
      }
    }
    // Nothing of this transaction can have committed: replay it on a new connection.
    // Invisible to the caller.
    if (st.code() == Code::unavailable && lost_before_commit && reconnects < kMaxReconnects &&
        Clock::now() < options.deadline) {
      ++reconnects;
      db.metrics().reconnects.fetch_add(1);
      fresh = true;
      --attempt;
      continue;
    }
    fresh = false;
    if (!is_retryable(st.code())) return st;
    last = st;
    count_retry(db.metrics(), st.code());
    const auto pause = backoff(attempt);
    if (attempt == options.max_attempts || Clock::now() + pause >= options.deadline) break;
    if (options.before_pause) options.before_pause();
    std::this_thread::sleep_for(pause);
  }
  db.metrics().gave_up_busy.fetch_add(1);
  return Status(Code::busy, "the database stayed contended (" + last.to_string() +
                                "); nothing was written, retry the request");
}

}  // namespace onceorder::store
