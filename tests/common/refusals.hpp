// Counts what the first line of defence (row locks) should have made unnecessary: deadlocks,
// and refusals by the second line (a foreign key, a guard trigger, a CHECK, a unique key that
// is not a request's idempotency receipt). End states cannot show them: the operation
// retries, or maps the refusal to an answer, and the data stays right. A test that asserts
// these counts are zero catches a lock that went missing behind an intact constraint.
//
// Thread-safety: the counters are shared by every connection of a Database (atomics and a
// mutex for the messages); each RefusalCountingConnection belongs to one thread at a time, as
// every Connection does.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::testing {

struct Refusals {
  std::atomic<int> deadlocks{0};
  std::atomic<int> second_line{0};
  std::mutex mu;
  std::vector<std::string> messages;  // the first few, for the failure's text

  void reset() {
    std::lock_guard lock(mu);
    deadlocks = 0;
    second_line = 0;
    messages.clear();
  }
  // "" when none, else one line per refusal seen (the first few).
  std::string describe() {
    std::lock_guard lock(mu);
    std::string out;
    for (const auto& m : messages) out += (out.empty() ? "" : "; ") + m;
    return out;
  }

  // Whether `st` is a deadlock or a second line's refusal; counted if so.
  void note(std::string_view statement, const Status& st) {
    constexpr std::size_t kKept = 4;
    const Code code = st.code();
    const bool receipt = st.message().find("receipt") != std::string::npos;
    const bool refused = code == Code::reference_violation || code == Code::check_violation ||
                         (code == Code::unique_violation && !receipt);
    if (code == Code::deadlock) {
      ++deadlocks;
    } else if (refused) {
      ++second_line;
    } else {
      return;
    }
    std::lock_guard lock(mu);
    if (messages.size() < kKept) messages.push_back(std::string(statement) + ": " + st.to_string());
  }
};

// A real connection that notes every deadlock and second-line refusal its statements meet.
class RefusalCountingConnection final : public store::Connection {
 public:
  RefusalCountingConnection(std::unique_ptr<store::Connection> inner, Refusals& seen)
      : inner_(std::move(inner)), seen_(seen) {}
  Engine engine() const override { return inner_->engine(); }
  Status do_begin(store::TxMode mode) override { return inner_->begin(mode); }
  void rollback() override { inner_->rollback(); }
  bool in_transaction() const override { return inner_->in_transaction(); }
  void bound_statements(std::optional<store::Clock::time_point> until) override {
    inner_->bound_statements(until);
  }
  bool broken() const override { return inner_->broken(); }
  bool lost_before_commit() const override { return inner_->lost_before_commit(); }
  Status exec_script(std::string_view sql) override { return inner_->exec_script(sql); }
  Status lock_migrations() override { return inner_->lock_migrations(); }
  void unlock_migrations() override { inner_->unlock_migrations(); }
  bool open_next(Opener opener) override { return inner_->open_next(std::move(opener)); }
  std::uint64_t opened_for() const override { return inner_->opened_for(); }

 protected:
  Status do_commit() override {
    Status st = inner_->commit();
    if (!st.ok()) seen_.note("COMMIT", st);
    return st;
  }
  Result<store::Rows> do_query(const store::Statement& stmt, std::span<const store::Param> params,
                               store::Then then) override {
    auto rows = inner_->query(stmt, params, then);
    if (!rows.ok()) seen_.note(stmt.name, rows.status());
    return rows;
  }

 private:
  std::unique_ptr<store::Connection> inner_;
  Refusals& seen_;
};

// A Database on `url` whose connections count into `seen` (and carry `options`' hook).
inline std::unique_ptr<store::Database> open_counting_refusals(const DbUrl& url,
                                                               store::DatabaseOptions options,
                                                               Refusals& seen) {
  options.transaction_pooler = options.transaction_pooler || url.transaction_pooler;
  return std::make_unique<store::Database>(
      url.engine, options, [url, options, &seen]() -> Result<std::unique_ptr<store::Connection>> {
        auto conn = store::dialect_for(url.engine).connect(url.target, options);
        if (!conn.ok()) return conn.status();
        auto counted = std::make_unique<RefusalCountingConnection>(std::move(conn).value(), seen);
        if (options.statement_hook) counted->set_statement_hook(options.statement_hook);
        return std::unique_ptr<store::Connection>(std::move(counted));
      });
}

}  // namespace onceorder::testing
