#include "store/postgres/pg_connection.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "onceorder/core/redact.hpp"

namespace onceorder::store::postgres {

Code classify_sqlstate(std::string_view s) {
  if (s == "40P01") return Code::deadlock;
  if (s == "55P03") return Code::lock_timeout;
  if (s == "40001") return Code::serialization_failure;
  if (s == "23505") return Code::unique_violation;
  if (s == "23514") return Code::check_violation;
  if (s == "23503") return Code::reference_violation;
  if (s == "57014") return Code::busy;  // statement_timeout / cancel
  // oo_assert_unmoved (migration 28): a batch decided ahead found its rows or keys moved;
  // nothing was written, and its caller decides it again (Intake's placement batch).
  if (s == "OO002") return Code::retry_transaction;
  if (s.starts_with("08") || s == "57P01" || s == "57P02" || s == "57P03") return Code::unavailable;
  return Code::internal;
}

namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

class PgConnection final : public Connection {
 public:
  // `tx_settings`: behind a transaction-mode pooler, the statement that sets the timeouts
  // for one transaction (sent after each BEGIN); empty on a direct connection, where they
  // were set once for the session.
  PgConnection(PGconn* conn, std::string tx_settings, std::chrono::milliseconds statement_timeout)
      : conn_(conn), tx_settings_(std::move(tx_settings)), statement_timeout_(statement_timeout) {}
  ~PgConnection() override { PQfinish(conn_); }

  Engine engine() const override { return Engine::postgres; }

  Status do_begin(TxMode) override {
    lost_before_commit_ = false;
    answer_by_.reset();  // set again by answer_by for this transaction
    unanswered_ = false;
    commit_sent_ = false;
    opener_ = nullptr;
    bound_.clear();  // set again by bound_statements for this transaction
    if (opened_) {   // BEGIN went out behind the last COMMIT; its answers wait unread
      held_.clear();
      in_tx_ = true;
      return Status::Ok();
    }
    // A restarted server closed this idle connection: find out before anything of the
    // transaction is sent, so that it can be replayed elsewhere without a doubt.
    if (!idle_and_alive()) {
      lost_before_commit_ = true;
      return lost("the server closed the connection before the transaction started");
    }
    // Sent lazily with the first statement (one round trip saved per transaction).
    pending_begin_ = true;
    held_.clear();
    in_tx_ = true;
    return Status::Ok();
  }

  Status do_commit() override {
    discard_opened();      // nothing of it was asked for
    opener_ = nullptr;     // it opens behind a statement's answer
    if (!held_.empty()) {  // the held statements go with the COMMIT
      const bool send_begin = pending_begin_;
      pending_begin_ = false;
      return pipelined(nullptr, send_begin, true).status();
    }
    if (pending_begin_) {  // nothing was sent: nothing to commit
      pending_begin_ = false;
      in_tx_ = false;
      return Status::Ok();
    }
    commit_sent_ = true;  // a connection lost from here on may have committed it
    Status st = simple("COMMIT");
    in_tx_ = false;
    return st;
  }

  void rollback() override {
    discard_opened();
    held_.clear();  // never sent
    opener_ = nullptr;
    if (pending_begin_) {
      pending_begin_ = false;
      in_tx_ = false;
      return;
    }
    // A broken connection is dropped, which ends its transaction on the server; one whose
    // answers are still in flight could not take a ROLLBACK anyway.
    if (!broken_ && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
      ResultPtr r(exec_text("ROLLBACK"));
      if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) broken_ = true;
    }
    in_tx_ = false;
  }

  // SET LOCAL statement_timeout, sent with the transaction's BEGIN (in the same round trip):
  // what is left until `until`, at most the session's statement_timeout.
  void bound_statements(std::optional<Clock::time_point> until) override {
    if (!until) {
      bound_.clear();
      return;
    }
    // Rounded up: the server's timer must not fire before the deadline the caller checks.
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*until - Clock::now());
    const auto ms = std::clamp(left, std::chrono::milliseconds(1), statement_timeout_);
    bound_ = fmt::format("SELECT set_config('statement_timeout', '{}ms', true)", ms.count());
  }

  void answer_by(std::optional<Clock::time_point> until) override { answer_by_ = until; }

  bool in_transaction() const override { return in_tx_; }
  bool broken() const override { return broken_ || PQstatus(conn_) != CONNECTION_OK; }
  bool lost_before_commit() const override { return lost_before_commit_; }

  bool open_next(Opener opener) override {
    // Behind a pooler the next transaction may land on another server connection.
    if (pooled()) return false;
    opener_ = std::move(opener);
    return true;
  }
  std::uint64_t opened_for() const override { return opened_ ? opened_->token : 0; }

  Result<Rows> do_query(const Statement& s, std::span<const Param> params, Then then) override {
    // The transaction's first statement: until a COMMIT is sent with it, a connection lost
    // now loses nothing that could have committed.
    const bool first = pending_begin_ || opened_;
    auto rows = query_once(s, params, then);
    if (first && !rows.ok() && rows.status().code() == Code::unavailable && !commit_sent_) {
      lost_before_commit_ = true;
    }
    return rows;
  }

  Status exec_script(std::string_view sql) override {
    discard_opened();
    if (!held_.empty()) {  // what was held goes first
      const bool send_begin = pending_begin_;
      pending_begin_ = false;
      OO_RETURN_IF_ERROR(pipelined(nullptr, send_begin, false).status());
    }
    if (pending_begin_) {  // the lazy BEGIN travels with the script
      pending_begin_ = false;
      return simple("BEGIN; " + settings_script() + std::string(sql));
    }
    return simple(std::string(sql));
  }

  // Each try is a transaction of its own, and a waiter holds no snapshot between tries: a
  // waiting statement would, and CREATE INDEX CONCURRENTLY (run by the lock's holder) waits
  // for every older snapshot. The winner keeps its transaction open, idle (the idle timeout
  // lifted for it), until unlock_migrations: the lock lives exactly as long as that
  // transaction, on whichever server connection a pooler gave it.
  Status lock_migrations() override {
    static constexpr Statement kTry{"migrate_try_lock",
                                    "SELECT pg_try_advisory_xact_lock(7210431190431903)"};
    const auto give_up = Clock::now() + std::chrono::minutes(30);
    for (;;) {
      OO_RETURN_IF_ERROR(begin(TxMode::write));
      auto rows = Connection::query(kTry, {});
      // A simple query drops the extended protocol's portal, and with it the snapshot the
      // holder would otherwise keep (and the index builds wait for).
      Status st =
          rows.ok() ? simple("SET LOCAL idle_in_transaction_session_timeout = 0") : rows.status();
      if (!st.ok()) {
        rollback();
        return st;
      }
      if (rows->at(0).boolean(0)) return Status::Ok();
      rollback();
      if (Clock::now() > give_up)
        return Status(Code::busy, "another process has been migrating for 30 minutes");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  void unlock_migrations() override { rollback(); }

 private:
  Result<Rows> query_once(const Statement& s, std::span<const Param> params, Then then) {
    commit_sent_ = false;
    OO_ASSIGN_OR_RETURN(Outgoing out, outgoing(s, params));
    if (then == Then::with_next) {
      held_.push_back(std::move(out));
      return Rows{};
    }
    if (opened_) {
      if (then == Then::stay && opens_with(out)) {
        held_.clear();  // sent with the opening
        return read_opened();
      }
      discard_opened();  // not what it was opened for: start over
    }
    const bool send_begin = pending_begin_;
    const bool send_commit = then == Then::commit && in_tx_;
    pending_begin_ = false;
    const bool with_held = !held_.empty();
    // Behind a pooler even a lone statement needs its transaction's settings.
    if (send_begin && send_commit && !pooled() && bound_.empty() && !with_held && !opener_)
      return alone(out);
    if (!send_begin && !send_commit && !with_held) {
      ResultPtr r(exec(out));
      if (Status st = check(r.get(), out.label); !st.ok()) return st;
      return rows_of(r.get());
    }
    return pipelined(&out, send_begin, send_commit);
  }

  // One statement as it goes out: a prepared name or (behind a pooler) its text, and its
  // parameters as text (nullopt: NULL). It owns its text and parameters, so it can be held
  // back (Then::with_next) until the next statement is sent.
  struct Outgoing {
    std::string_view label;             // the statement's name, which outlives the connection
    const std::string* name = nullptr;  // the prepared statement's; nullptr: unnamed, `sql`
    std::string sql;
    std::vector<std::optional<std::string>> params;
    std::vector<const char*> values() const {
      std::vector<const char*> v;
      v.reserve(params.size());
      for (const auto& p : params) v.push_back(p ? p->c_str() : nullptr);
      return v;
    }
  };

  // An opening (open_next) sent: its token, and its statements in the order sent after BEGIN.
  struct Opened {
    std::uint64_t token;
    std::vector<Outgoing> calls;
  };

  Result<Outgoing> outgoing(const Statement& s, std::span<const Param> params) {
    Outgoing out;
    out.label = s.name;
    // Behind a transaction-mode pooler a statement prepared on one server connection is
    // unknown on the next (and its name may be taken there): every statement is sent
    // unnamed, parsed with its parameters in the same round trip.
    if (pooled()) {
      out.sql = std::string(s.sql);
    } else {
      auto known = prepared_.find(s.name);
      if (known == prepared_.end()) {
        std::string n(s.name);
        const bool sent = PQsendPrepare(conn_, n.c_str(), std::string(s.sql).c_str(), 0, nullptr);
        ResultPtr r(sent ? last_result() : nullptr);
        if (Status st = check(r.get(), s.name); !st.ok()) return st;
        known = prepared_.emplace(s.name, std::move(n)).first;
      }
      out.name = &known->second;
    }
    // Text parameters: both engines' SQL casts where it needs a type.
    out.params.reserve(params.size());
    for (const Param& p : params) {
      if (const auto* n = std::get_if<std::int64_t>(&p))
        out.params.emplace_back(std::to_string(*n));
      else if (const auto* v = std::get_if<std::string_view>(&p))
        out.params.emplace_back(std::string(*v));
      else
        out.params.emplace_back(std::nullopt);
    }
    return out;
  }

  PGresult* exec(const Outgoing& s) { return send(s) ? last_result() : nullptr; }
  bool send(const Outgoing& s) {
    const auto values = s.values();
    if (s.name == nullptr)
      return PQsendQueryParams(conn_, s.sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, 0) == 1;
    return PQsendQueryPrepared(conn_, s.name->c_str(), static_cast<int>(values.size()),
                               values.data(), nullptr, nullptr, 0) == 1;
  }

  // A statement without parameters, sent with the extended protocol (as pipeline mode needs).
  bool send_text(const char* sql) {
    return PQsendQueryParams(conn_, sql, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
  }

  // A transaction of one statement, sent alone: PostgreSQL runs a statement outside a
  // transaction block as its own transaction, all or nothing, so a BEGIN and a COMMIT
  // around it would only cost the server work.
  Result<Rows> alone(const Outgoing& s) {
    commit_sent_ = true;  // a connection lost from here on may have committed it
    ResultPtr r(exec(s));
    in_tx_ = false;  // committed, or rolled back by its own failure
    if (Status st = check(r.get(), s.label); !st.ok()) return st;
    return rows_of(r.get());
  }

  // BEGIN? + settings? + bound? + the held statements + `stmt`? + COMMIT? in one pipeline: one
  // network round trip. The rows are `stmt`'s; the first error, whoever met it, is the answer
  // (PostgreSQL skips the rest of the pipeline after it).
  Result<Rows> pipelined(const Outgoing* stmt, bool send_begin, bool send_commit) {
    std::vector<Outgoing> held = std::move(held_);
    held_.clear();
    if (PQenterPipelineMode(conn_) != 1) return lost("cannot enter pipeline mode");
    const bool send_settings = send_begin && pooled();
    const bool send_bound = send_begin && !bound_.empty();
    bool sent = true;
    if (send_begin) sent = send_text("BEGIN");
    if (send_settings) sent = sent && send_text(tx_settings_.c_str());
    if (send_bound) sent = sent && send_text(bound_.c_str());
    for (const Outgoing& h : held) sent = sent && send(h);
    if (stmt) sent = sent && send(*stmt);
    // The next transaction opens behind this one's COMMIT once `stmt` ran: its answer is
    // flushed to us before the COMMIT runs.
    Opener opener = std::exchange(opener_, nullptr);
    if (!send_commit || !stmt) opener = nullptr;
    if (opener) sent = sent && PQsendFlushRequest(conn_);
    // From here on, the server may have received COMMIT: a lost connection is not
    // replayed (it may have committed).
    commit_sent_ = send_commit;
    if (send_commit) sent = sent && send_text("COMMIT");
    sent = sent && PQpipelineSync(conn_);
    if (!sent) return lost(PQerrorMessage(conn_));

    // What each result answers, in the order sent: a label for errors; `stmt`'s rows are kept.
    std::vector<std::string_view> labels;
    if (send_begin) labels.emplace_back("BEGIN");
    if (send_settings) labels.emplace_back("SET");
    if (send_bound) labels.emplace_back("SET statement_timeout");
    for (const Outgoing& h : held) labels.emplace_back(h.label);
    const std::size_t at_stmt = labels.size();
    if (stmt) labels.emplace_back(stmt->label);
    if (send_commit) labels.emplace_back("COMMIT");
    Status first_error;
    Rows rows;
    std::optional<Opened> opening;  // sent behind the sync that ends this transaction
    for (std::size_t i = 0; i < labels.size(); ++i) {
      ResultPtr r(next_result());
      if (!r) return lost("pipeline ended early");
      if (PQresultStatus(r.get()) != PGRES_PIPELINE_ABORTED && first_error.ok()) {
        first_error = check(r.get(), labels[i]);
        if (first_error.ok() && stmt && i == at_stmt) rows = rows_of(r.get());
      }
      while (PGresult* extra = next_result()) PQclear(extra);  // end of this command
      if (opener && i == at_stmt && first_error.ok()) {
        opening = send_opening(opener);
        if (broken_) return lost(PQerrorMessage(conn_));
      }
    }
    ResultPtr sync(next_result());
    if (!sync || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC) return lost("no pipeline sync");
    if (opening) {
      opened_ = std::move(opening);
      // Committed: the opening's answers wait for the next transaction. Else they are read
      // and dropped here, and the caller's rollback rolls back what the opening began.
      if (first_error.ok()) {
        in_tx_ = false;
        return rows;
      }
      Status drained = read_opened().status();
      return broken_ ? drained : first_error;
    }
    if (PQexitPipelineMode(conn_) != 1) return lost("cannot leave pipeline mode");
    if (send_commit && first_error.ok()) in_tx_ = false;
    if (!first_error.ok()) return first_error;
    return rows;
  }

  // Asks `opener` for the next transaction's first statements and sends them behind what is
  // in flight: BEGIN, the statements, a sync. Nothing when it builds none, or when one of
  // them is not prepared yet (preparing takes a round trip of its own).
  std::optional<Opened> send_opening(const Opener& opener) {
    std::optional<Opened> opening;
    opener([&](std::uint64_t token, std::span<const Call> calls) {
      if (token == 0 || calls.empty() || opening) return;
      Opened o{token, {}};
      for (const Call& call : calls) {
        if (!prepared_.contains(call.stmt.name)) return;
        auto out = outgoing(call.stmt, call.params);
        if (!out.ok()) return;
        o.calls.push_back(std::move(*out));
      }
      bool sent = send_text("BEGIN");
      for (const Outgoing& out : o.calls) sent = sent && send(out);
      sent = sent && PQpipelineSync(conn_);
      if (!sent) broken_ = true;
      opening = std::move(o);
    });
    return opening;
  }

  // The opening's statements are `out` and the held ones before it, exactly.
  bool opens_with(const Outgoing& out) const {
    const auto& calls = opened_->calls;
    if (calls.size() != held_.size() + 1) return false;
    const auto same = [](const Outgoing& a, const Outgoing& b) {
      return a.label == b.label && a.sql == b.sql && a.params == b.params;
    };
    for (std::size_t i = 0; i < held_.size(); ++i)
      if (!same(calls[i], held_[i])) return false;
    return same(calls.back(), out);
  }

  // The opening's answers (BEGIN, the held statements, the last one's rows): the first error,
  // or the last statement's rows. Leaves pipeline mode and forgets the opening (the server
  // may be left in its transaction).
  Result<Rows> read_opened() {
    const std::vector<Outgoing> calls = std::move(opened_->calls);
    opened_.reset();
    Status first_error;
    Rows rows;
    for (std::size_t i = 0; i <= calls.size(); ++i) {  // BEGIN, then each call
      ResultPtr r(next_result());
      if (!r) return lost("pipeline ended early");
      if (PQresultStatus(r.get()) != PGRES_PIPELINE_ABORTED && first_error.ok()) {
        first_error = check(r.get(), i == 0 ? std::string_view("BEGIN") : calls[i - 1].label);
        if (first_error.ok() && i == calls.size()) rows = rows_of(r.get());
      }
      while (PGresult* extra = next_result()) PQclear(extra);
    }
    ResultPtr sync(next_result());
    if (!sync || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC) return lost("no pipeline sync");
    if (PQexitPipelineMode(conn_) != 1) return lost("cannot leave pipeline mode");
    if (!first_error.ok()) return first_error;
    return rows;
  }

  // An opening nobody asked for: read, then rolled back. The caller's transaction, if one was
  // begun on it, starts over with a lazy BEGIN of its own.
  void discard_opened() {
    if (!opened_) return;
    (void)read_opened();
    if (broken_) return;  // lost: broken() says so
    if (PQtransactionStatus(conn_) != PQTRANS_IDLE) {
      ResultPtr r(exec_text("ROLLBACK"));
      if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) broken_ = true;
    }
    if (in_tx_) pending_begin_ = true;
  }

  bool pooled() const { return !tx_settings_.empty(); }
  std::string settings_script() const {
    std::string out = pooled() ? tx_settings_ + "; " : std::string();
    if (!bound_.empty()) out += bound_ + "; ";
    return out;
  }

  // An idle connection has nothing to say but the server's goodbye: any input waiting
  // (the FATAL message of a shut-down backend, then end of file) means it is gone. A
  // healthy one taken for dead only costs a new connection.
  bool idle_and_alive() {
    if (broken_ || PQstatus(conn_) != CONNECTION_OK || PQsocket(conn_) < 0) return false;
    pollfd p{PQsocket(conn_), POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }

  Status lost(std::string why) {
    broken_ = true;
    if (unanswered_) {
      why =
          "no answer by the transaction's deadline (the server is cut off, frozen or waiting "
          "for its standby); the connection was dropped";
      if (commit_sent_) why += " after its COMMIT was sent: the outcome is unknown";
    }
    return Status(Code::unavailable, "postgresql: " + why);
  }

  Status simple(const std::string& sql) {
    ResultPtr r(exec_text(sql));
    return check(r.get(), "script");
  }

  // What PQexec does, without waiting past answer_by_: the first error, else the last result.
  PGresult* exec_text(const std::string& sql) {
    return PQsendQuery(conn_, sql.c_str()) == 1 ? last_result() : nullptr;
  }
  PGresult* last_result() {
    ResultPtr kept;
    while (PGresult* r = next_result()) {
      const bool failed = kept && PQresultStatus(kept.get()) == PGRES_FATAL_ERROR;
      if (failed)
        PQclear(r);
      else
        kept.reset(r);
    }
    return unanswered_ ? nullptr : kept.release();
  }

  // PQgetResult, without waiting past answer_by_. Past it nullptr, and the connection is
  // broken: the answers still in flight can never be read in order.
  PGresult* next_result() {
    while (PQisBusy(conn_) == 1) {
      if (!readable_in_time()) {
        unanswered_ = true;
        broken_ = true;
        return nullptr;
      }
      if (PQconsumeInput(conn_) == 0) break;  // a read error: PQgetResult reports it
    }
    return PQgetResult(conn_);
  }
  bool readable_in_time() const {
    const int fd = PQsocket(conn_);
    if (fd < 0) return true;  // PQgetResult reports the lost connection
    for (;;) {
      int wait_ms = -1;
      if (answer_by_) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(*answer_by_ - Clock::now()).count();
        if (left <= 0) return false;
        wait_ms = static_cast<int>(std::min<std::int64_t>(left, 60'000));
      }
      pollfd p{fd, POLLIN, 0};
      const int n = ::poll(&p, 1, wait_ms);
      if (n > 0 || (n < 0 && errno != EINTR)) return true;
    }
  }

  Status check(PGresult* r, std::string_view what) {
    const auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return Status::Ok();
    if (!r || PQstatus(conn_) != CONNECTION_OK) return lost(PQerrorMessage(conn_));
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char* msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    const Code code = classify_sqlstate(state ? state : "");
    if (code == Code::unavailable) broken_ = true;
    return Status(code, fmt::format("postgresql {} ({}): {}", what, state ? state : "?",
                                    msg ? msg : PQresultErrorMessage(r)));
  }

  static Rows rows_of(PGresult* r) {
    Rows rows;
    const int n = PQntuples(r);
    const int m = PQnfields(r);
    rows.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      std::vector<std::optional<std::string>> cols;
      cols.reserve(static_cast<size_t>(m));
      for (int j = 0; j < m; ++j) {
        if (PQgetisnull(r, i, j))
          cols.emplace_back(std::nullopt);
        else
          cols.emplace_back(
              std::string(PQgetvalue(r, i, j), static_cast<size_t>(PQgetlength(r, i, j))));
      }
      rows.emplace_back(std::move(cols));
    }
    return rows;
  }

  PGconn* conn_;
  const std::string tx_settings_;
  const std::chrono::milliseconds statement_timeout_;  // the session's
  std::string bound_;  // this transaction's statement bound (bound_statements); empty: none
  bool pending_begin_ = false;
  bool in_tx_ = false;
  bool broken_ = false;
  bool lost_before_commit_ = false;
  bool commit_sent_ = false;                    // the last statement was sent with COMMIT behind it
  std::optional<Clock::time_point> answer_by_;  // answer_by: wait no longer for an answer
  bool unanswered_ = false;                     // answer_by_ passed: the connection broke
  std::vector<Outgoing> held_;  // Then::with_next: sent with the next statement or COMMIT
  // open_next: asked for the next transaction's first statements behind the next COMMIT.
  Opener opener_;
  // Sent and committed behind: its answers wait on the connection, which stays in pipeline
  // mode until they are read (the next transaction's first statement, or discard_opened).
  std::optional<Opened> opened_;
  // Statements prepared on this connection: name → the name NUL-terminated, as libpq takes it.
  std::unordered_map<std::string_view, std::string> prepared_;
};

}  // namespace

Result<std::unique_ptr<Connection>> connect(const std::string& uri,
                                            const DatabaseOptions& options) {
  // The URL may name the application (`?application_name=`); "onceorder" otherwise.
  const char* keys[] = {"dbname", "fallback_application_name", nullptr};
  const char* values[] = {uri.c_str(), "onceorder", nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    PQfinish(conn);
    // libpq may quote the URI, or a bad part of it such as the password.
    return Status(Code::unavailable,
                  "cannot connect to PostgreSQL: " + redact_db_message(msg, uri));
  }
  // The same settings either way; behind a transaction-mode pooler a session SET would land
  // on whichever server connection runs it (and stay there for other clients), so there
  // they are set for each transaction, where nothing can separate them from it.
  const std::string timeouts = fmt::format(
      "SELECT set_config('lock_timeout', '{0}ms', {2}), set_config('statement_timeout', "
      "'{1}ms', {2}), set_config('idle_in_transaction_session_timeout', '60s', {2}), "
      "set_config('client_min_messages', 'warning', {2})",
      options.lock_timeout.count(), options.statement_timeout.count(),
      options.transaction_pooler ? "true" : "false");
  auto c = std::make_unique<PgConnection>(conn, options.transaction_pooler ? timeouts : "",
                                          options.statement_timeout);
  if (!options.transaction_pooler) {
    Status st = c->exec_script(timeouts);
    if (!st.ok()) return st;
  }
  return std::unique_ptr<Connection>(std::move(c));
}

}  // namespace onceorder::store::postgres
