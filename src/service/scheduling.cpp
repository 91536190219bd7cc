#include "onceorder/service/scheduling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

#include "onceorder/core/limits.hpp"
#include "onceorder/core/number_format.hpp"
#include "onceorder/core/process_identity.hpp"
#include "onceorder/core/text.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/receipts.hpp"
#include "store/receipts_store.hpp"
#include "store/scheduling_store.hpp"

namespace onceorder {
namespace {

using store::Clock;
using store::Connection;
using store::TxOptions;

using store::read_tx;
using store::write_tx;
Clock::time_point soon() { return Clock::now() + std::chrono::seconds(30); }

// Infrastructure trouble is not the item's fault: leave it to the lease and the reaper.
bool infrastructure(Code code) { return code == Code::busy || code == Code::unavailable; }

Status check_request_key(const std::optional<std::string>& key) {
  if (key && !is_valid_idempotency_key(*key)) {
    return Status(
        Code::invalid_request, "invalid request",
        {FieldError{"Idempotency-Key",
                    fmt::format("must be 1–{} printable ASCII characters", kMaxIdempotencyKey)}});
  }
  return Status::Ok();
}

// ["site","order","lot"]: a key in a normalized request.
void append_key_json(std::string& out, const OrderKey& k) {
  out += '[';
  append_json_string(out, k.site_code);
  out += ',';
  append_json_string(out, k.order_no);
  out += ',';
  append_json_string(out, k.lot_no);
  out += ']';
}

// A run receipt's answer: one line per skipped order, "site order lot reason" (no part of a
// key holds a space: validate_order_key).
std::string skipped_text(const std::vector<Skipped>& skipped) {
  std::string out;
  for (const Skipped& s : skipped) {
    if (!out.empty()) out += '\n';
    out += fmt::format("{} {} {} {}", s.key.site_code, s.key.order_no, s.key.lot_no, s.reason);
  }
  return out;
}

std::optional<std::vector<Skipped>> parse_skipped(std::string_view text) {
  std::vector<Skipped> out;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    std::string parts[4];
    for (int i = 0; i < 4; ++i) {
      const size_t sp = i < 3 ? line.find(' ') : std::string_view::npos;
      if (i < 3 && sp == std::string_view::npos) return std::nullopt;
      parts[i] = std::string(line.substr(0, sp));
      line = i < 3 ? line.substr(sp + 1) : std::string_view();
    }
    out.push_back({{parts[0], parts[1], parts[2]}, parts[3]});
  }
  return out;
}

// A run receipt's answer: the skipped lines, then "#orphans_aborted <n>" when it aborted any
// (a line of two words, which no skipped line is; an answer without it aborted none).
constexpr std::string_view kOrphansLine = "#orphans_aborted ";

std::string run_answer_text(const std::vector<Skipped>& skipped, std::int64_t orphans) {
  std::string out = skipped_text(skipped);
  if (orphans == 0) return out;
  if (!out.empty()) out += '\n';
  return out + std::string(kOrphansLine) + std::to_string(orphans);
}

bool parse_run_answer(std::string_view text, std::vector<Skipped>& skipped, std::int64_t& orphans) {
  orphans = 0;
  const size_t at = text.rfind(kOrphansLine);
  if (at != std::string_view::npos && (at == 0 || text[at - 1] == '\n')) {
    const std::string_view n = text.substr(at + kOrphansLine.size());
    if (n.empty() || n.find_first_not_of("0123456789") != std::string_view::npos) return false;
    orphans = std::stoll(std::string(n));
    text = text.substr(0, at == 0 ? 0 : at - 1);
  }
  auto parsed = parse_skipped(text);
  if (!parsed) return false;
  skipped = std::move(*parsed);
  return true;
}

// Why a key a manual run was given got no item.
std::string skip_reason(const store::KeyState& s) {
  return !s.has_source      ? "unknown_order"
         : s.has_success    ? "already_scheduled"
         : s.has_live       ? "in_progress"
         : s.cancelled      ? "order_cancelled"
         : s.legacy_pending ? "legacy_pending"
                            : "max_attempts_reached";
}

Status check_requeue(const std::vector<OrderKey>& orders) {
  std::vector<FieldError> errors;
  if (orders.empty()) errors.push_back({"orders", "must hold at least one order"});
  if (orders.size() > kMaxOrdersPerRequest) errors.push_back(too_many_orders(orders.size()));
  for (size_t i = 0; i < orders.size() && errors.size() < kMaxFieldErrors; ++i) {
    Status st = validate_order_key(orders[i], fmt::format("orders[{}].", i));
    for (const auto& f : st.fields()) errors.push_back(f);
  }
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
  return Status::Ok();
}

// Why a key is not (or would not be) re-queued; nullopt: it reached the limit.
std::optional<std::string> requeue_refusal(const store::KeyState& s, int max_attempts) {
  if (!s.has_source) return "unknown_order";
  if (s.cancelled) return "order_cancelled";
  if (s.has_success) return "already_scheduled";
  if (s.has_live) return "in_progress";
  if (s.failed < max_attempts) return "not_exhausted";
  return std::nullopt;
}

// A re-queue's request as its receipt holds it: the keys, as JSON.
std::string keys_json(const std::vector<OrderKey>& keys) {
  std::string request = "[";
  for (const OrderKey& k : keys) {
    if (request.back() != '[') request += ',';
    append_key_json(request, k);
  }
  request += ']';
  return request;
}

// The first answer of a re-queue with this request key, from its receipt.
Result<RequeueOutcome> replayed_requeue(const store::StoredAnswer& stored) {
  auto lines = parse_skipped(stored.answer);
  if (!lines) return Status(Code::internal, "a re-queue receipt's answer is unreadable");
  RequeueOutcome out;
  out.replayed = true;
  for (Skipped& l : *lines) {
    if (l.reason == "requeued") {
      out.requeued.push_back(std::move(l.key));
    } else {
      out.skipped.push_back(std::move(l));
    }
  }
  return out;
}

class StandardProductionStep final : public ProductionStep {
 public:
  Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) override {
    const NumberedProduction p = plan(claim);
    return issuer.issue(p.scope, p.title);
  }
  std::optional<NumberedProduction> numbered(const Claim& claim) override { return plan(claim); }

 private:
  static NumberedProduction plan(const Claim& claim) {
    return {production_scope(claim.key.site_code),
            fmt::format("production {}/{}/{}", claim.key.site_code, claim.key.order_no,
                        claim.key.lot_no)};
  }
};

// The issuer a step gets: the claim's transaction, and nothing else of the store.
class ClaimIssuer final : public DocumentIssuer {
 public:
  ClaimIssuer(store::SchedulingStore& store, Connection& c, const Claim& claim)
      : store_(store), c_(c), claim_(claim) {}
  Result<ProductionOrder> issue(std::string_view scope, std::string_view title) override {
    return store_.produce_numbered(c_, claim_, scope, title);
  }

 private:
  store::SchedulingStore& store_;
  Connection& c_;
  const Claim& claim_;
};

}  // namespace

std::shared_ptr<ProductionStep> standard_production_step() {
  return std::make_shared<StandardProductionStep>();
}

Scheduler::Scheduler(store::Database& db, SchedulerOptions options)
    : db_(db),
      options_(std::move(options)),
      store_(std::make_unique<store::SchedulingStore>(db.dialect())) {
  if (options_.owner.empty()) options_.owner = process_identity();
  if (!options_.default_step) options_.default_step = standard_production_step();
  options_.claim_batch = std::clamp(options_.claim_batch, 1, 1000);
  options_.workers = std::clamp(options_.workers, 1, 256);
}

Scheduler::~Scheduler() = default;

ProductionStep& Scheduler::step_for(const std::string& site_code) {
  auto it = options_.site_steps.find(site_code);
  return it != options_.site_steps.end() && it->second ? *it->second : *options_.default_step;
}

Result<SourceImport> Scheduler::import_source_orders(std::span<const SourceOrder> orders,
                                                     Clock::time_point deadline,
                                                     const std::optional<std::string>& idem) {
  OO_RETURN_IF_ERROR(validate_source_orders(orders));
  OO_RETURN_IF_ERROR(check_request_key(idem));
  // Key order: the same lock order on every path that takes several rows.
  std::vector<SourceOrder> sorted(orders.begin(), orders.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.key < b.key; });
  // The sorted orders are the normalized request: the answer does not depend on their order.
  std::optional<store::RequestKey> key;
  std::string request;
  if (idem) {
    key = store::RequestKey{store::RequestRoute::source_orders, "", *idem};
    request = "[";
    for (const SourceOrder& o : sorted) {
      if (request.size() > 1) request += ',';
      append_key_json(request, o.key);
      request.back() = ',';
      request += std::to_string(o.quantity);
      request += ']';
    }
    request += ']';
  }
  store::ReceiptsStore receipts(db_.dialect());
  bool waited_on_key = false;
  auto imported = store::transact<SourceImport>(
      db_, write_tx(deadline), [&](Connection& c) -> Result<SourceImport> {
        SourceImport out;
        if (key) {
          auto stored = receipts.begin(c, *key, request);
          waited_on_key = !stored.ok() && stored.status().code() == Code::lock_timeout;
          if (!stored.ok()) return stored.status();
          if (*stored) {
            auto v = store::answer_integers((*stored)->answer, 2);
            if (!v) return Status(Code::internal, "a source-order receipt's answer is unreadable");
            return SourceImport{(*v)[0], (*v)[1], true};
          }
        }
        for (const SourceOrder& o : sorted) {
          OO_ASSIGN_OR_RETURN(bool created, store_->insert_source(c, o));
          if (created) {
            ++out.created;
            continue;
          }
          OO_ASSIGN_OR_RETURN(auto quantity, store_->source_quantity(c, o.key));
          if (quantity && *quantity != o.quantity) {
            return Status(
                Code::source_order_conflict,
                fmt::format("source order {}/{}/{} exists with quantity {}, not {}; nothing "
                            "from this request was written",
                            o.key.site_code, o.key.order_no, o.key.lot_no, *quantity, o.quantity));
          }
          ++out.existing;
        }
        if (key) {
          OO_RETURN_IF_ERROR(
              receipts.answer(c, *key, fmt::format("{} {}", out.created, out.existing)));
        }
        return out;
      });
  if (!imported.ok()) return in_progress_if_waited(imported.status(), waited_on_key);
  return imported;
}

Status Scheduler::fill_run(Connection& c, std::int64_t run_id,
                           const std::optional<std::vector<OrderKey>>& keys,
                           std::vector<Skipped>& skipped) {
  skipped.clear();
  if (!keys) {
    OO_RETURN_IF_ERROR(store_->insert_candidates(c, run_id, options_.max_attempts).status());
  } else {
    // Set-based where the engine allows: one statement for the items, one for the reasons,
    // rather than a round trip per key (up to kMaxOrdersPerRequest) before the answer.
    OO_ASSIGN_OR_RETURN(auto made,
                        store_->insert_items_for(c, run_id, *keys, options_.max_attempts));
    std::vector<OrderKey> rest;
    for (const OrderKey& k : *keys)
      if (!made.contains(k)) rest.push_back(k);
    if (!rest.empty()) {
      OO_ASSIGN_OR_RETURN(auto states, store_->key_states(c, rest));
      for (const OrderKey& k : rest) {
        auto it = states.find(k);
        skipped.push_back({k, skip_reason(it == states.end() ? store::KeyState{} : it->second)});
      }
    }
  }
  OO_ASSIGN_OR_RETURN(bool alive, store_->set_run_status(c, run_id, RunStatus::running, ""));
  if (!alive) return Status(Code::conflict, "the run was ended before it started");
  return Status::Ok();
}

Result<RunCreated> Scheduler::create_run(RunKind kind,
                                         const std::optional<std::vector<OrderKey>>& orders,
                                         Clock::time_point deadline,
                                         const std::optional<std::string>& idem) {
  std::optional<std::vector<OrderKey>> keys;
  if (orders) {
    std::vector<FieldError> errors;
    if (orders->empty())
      errors.push_back({"orders", "must hold at least one order (omit it for every candidate)"});
    if (orders->size() > kMaxOrdersPerRequest) errors.push_back(too_many_orders(orders->size()));
    for (size_t i = 0; i < orders->size() && errors.size() < kMaxFieldErrors; ++i) {
      Status st = validate_order_key((*orders)[i], fmt::format("orders[{}].", i));
      for (const auto& f : st.fields()) errors.push_back(f);
    }
    if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
    std::set<OrderKey> unique(orders->begin(), orders->end());
    keys.emplace(unique.begin(), unique.end());  // key order = lock order
  }
  OO_RETURN_IF_ERROR(check_request_key(idem));
  // The seed's clean-up at creation: a key held only by an orphan would otherwise be skipped
  // as in_progress until the reaper passes. A transaction of its own, committed before the
  // run's: its locks (source orders shared in key order, then the orphans) are never held
  // while item creation takes the source orders again in key order, so that a cancel,
  // which takes them in the same order, cannot deadlock with it.
  OO_ASSIGN_OR_RETURN(std::int64_t orphans,
                      store::transact<std::int64_t>(db_, write_tx(deadline), [&](Connection& c) {
                        return store_->abort_orphans(c, keys, options_.run_timeout.count());
                      }));
  std::vector<Skipped> skipped;
  if (idem) return create_keyed_run(kind, keys, deadline, *idem, orphans);

  OO_ASSIGN_OR_RETURN(std::int64_t run_id,
                      store::transact<std::int64_t>(db_, write_tx(deadline), [&](Connection& c) {
                        return store_->insert_run(c, kind, options_.owner);
                      }));
  auto filled = store::transact<bool>(db_, write_tx(deadline), [&](Connection& c) -> Result<bool> {
    OO_RETURN_IF_ERROR(fill_run(c, run_id, keys, skipped));
    return true;
  });
  if (!filled.ok()) {
    (void)fail_run(run_id, "could not create items: " + filled.status().message());
    return filled.status();
  }
  OO_ASSIGN_OR_RETURN(Run run, get_run(run_id, deadline));
  return RunCreated{std::move(run), std::move(skipped), false, orphans};
}

Result<RunCreated> Scheduler::create_keyed_run(RunKind kind,
                                               const std::optional<std::vector<OrderKey>>& keys,
                                               Clock::time_point deadline, const std::string& idem,
                                               std::int64_t orphans) {
  // The set of orders (sorted, each once) is the normalized request; none means every
  // candidate, which is another request than any list.
  const store::RequestKey key{store::RequestRoute::schedule_run, "", idem};
  std::string request = fmt::format("{{\"kind\":\"{}\",\"orders\":", to_string(kind));
  if (!keys) {
    request += "null";
  } else {
    request += '[';
    for (const OrderKey& k : *keys) {
      if (request.back() != '[') request += ',';
      append_key_json(request, k);
    }
    request += ']';
  }
  request += '}';
  // One transaction, unlike an unkeyed run's two: a run committed without its receipt would
  // be made again by the retry, and a receipt without its items would replay a run that
  // never got them.
  struct Made {
    std::int64_t run_id = 0;
    std::vector<Skipped> skipped;
    bool replayed = false;
    std::int64_t orphans = 0;
  };
  store::ReceiptsStore receipts(db_.dialect());
  bool waited_on_key = false;
  auto made = store::transact<Made>(db_, write_tx(deadline), [&](Connection& c) -> Result<Made> {
    auto stored = receipts.begin(c, key, request);
    waited_on_key = !stored.ok() && stored.status().code() == Code::lock_timeout;
    if (!stored.ok()) return stored.status();
    if (*stored) {
      Made out{0, {}, true};
      if (!parse_run_answer((*stored)->answer, out.skipped, out.orphans) || !(*stored)->run_id)
        return Status(Code::internal, "a run receipt's answer is unreadable");
      out.run_id = *(*stored)->run_id;
      return out;
    }
    Made out{0, {}, false, orphans};
    OO_ASSIGN_OR_RETURN(out.run_id, store_->insert_run(c, kind, options_.owner));
    OO_RETURN_IF_ERROR(fill_run(c, out.run_id, keys, out.skipped));
    OO_RETURN_IF_ERROR(
        receipts.answer(c, key, run_answer_text(out.skipped, out.orphans), out.run_id));
    return out;
  });
  if (!made.ok()) return in_progress_if_waited(made.status(), waited_on_key);
  OO_ASSIGN_OR_RETURN(Run run, get_run(made->run_id, deadline));
  return RunCreated{std::move(run), std::move(made->skipped), made->replayed, made->orphans};
}

Result<std::vector<Claim>> Scheduler::claim(std::int64_t run_id, int limit) {
  return store::transact<std::vector<Claim>>(db_, write_tx(soon()), [&](Connection& c) {
    return store_->claim(c, run_id, options_.owner, limit, options_.lease.count());
  });
}

Status Scheduler::complete_one(const Claim& claim) {
  auto done = store::transact<bool>(db_, write_tx(soon()), [&](Connection& c) -> Result<bool> {
    OO_ASSIGN_OR_RETURN(bool fenced, store_->fence_success(c, claim));
    if (!fenced) {
      // Lost, or the order was cancelled after the claim: then the item is void.
      OO_RETURN_IF_ERROR(store_->abort_if_cancelled(c, claim).status());
      return false;
    }
    ClaimIssuer issuer(*store_, c, claim);
    OO_RETURN_IF_ERROR(step_for(claim.key.site_code).produce(claim, issuer).status());
    return true;
  });
  if (done.ok()) {
    (*done ? items_produced_ : items_lost_).fetch_add(1);
    return *done ? Status::Ok() : Status(Code::conflict, "claim lost: the item was taken away");
  }
  if (infrastructure(done.status().code())) return done.status();
  // The step failed: the item fails (fenced), and its order is a candidate again.
  const std::string why = done.status().to_string();
  auto marked = store::transact<bool>(
      db_, write_tx(soon()), [&](Connection& c) { return store_->mark_failed(c, claim, why); });
  if (!marked.ok()) return marked.status();
  if (*marked) items_failed_.fetch_add(1);
  return done.status();
}

Result<std::int64_t> Scheduler::complete(std::span<const Claim> claims) {
  if (claims.empty()) return std::int64_t{0};
  std::vector<std::optional<NumberedProduction>> plans;
  plans.reserve(claims.size());
  bool all_numbered = true;
  for (const Claim& cl : claims) {
    plans.push_back(step_for(cl.key.site_code).numbered(cl));
    all_numbered = all_numbered && plans.back().has_value();
  }
  const auto n = static_cast<std::int64_t>(claims.size());
  // The whole batch in one transaction (one commit, one hold of each site's counter), all
  // or nothing: a lost claim or a failed step rolls it back and the items settle one by one.
  auto batch = store::transact<std::int64_t>(
      db_, write_tx(soon()), [&](Connection& c) -> Result<std::int64_t> {
        if (all_numbered) {
          std::vector<store::NumberedClaim> numbered;
          numbered.reserve(claims.size());
          for (size_t i = 0; i < claims.size(); ++i)
            numbered.push_back({claims[i], plans[i]->scope, plans[i]->title});
          OO_RETURN_IF_ERROR(store_->complete_numbered(c, numbered, store::Then::commit));
          return n;
        }
        // Some step writes for itself: every fence first (a site's counter is a hot row,
        // held from its first use to the commit), then each claim's production in claim
        // order, so that numbers of one scope follow the claims.
        OO_ASSIGN_OR_RETURN(std::int64_t fenced, store_->fence_many(c, claims));
        if (fenced != n) return Status(Code::conflict, "a claim in the batch was lost");
        for (size_t i = 0; i < claims.size(); ++i) {
          const Claim& cl = claims[i];
          if (plans[i]) {
            OO_RETURN_IF_ERROR(
                store_->produce_numbered(c, cl, plans[i]->scope, plans[i]->title).status());
            continue;
          }
          ClaimIssuer issuer(*store_, c, cl);
          OO_RETURN_IF_ERROR(step_for(cl.key.site_code).produce(cl, issuer).status());
        }
        return n;
      });
  if (batch.ok()) items_produced_.fetch_add(static_cast<std::uint64_t>(*batch));
  if (batch.ok() || infrastructure(batch.status().code())) return batch;
  // Something in the batch failed: settle each item on its own.
  return complete_each(claims);
}

Result<std::int64_t> Scheduler::complete_each(std::span<const Claim> claims) {
  std::int64_t succeeded = 0;
  for (const Claim& cl : claims) {
    Status st = complete_one(cl);
    if (st.ok())
      ++succeeded;
    else if (infrastructure(st.code()))
      return st;
  }
  return succeeded;
}

Status Scheduler::heartbeat(std::int64_t run_id) {
  auto beat = store::transact<store::Beat>(
      db_, write_tx(soon()), [&](Connection& c) { return store_->heartbeat(c, run_id); });
  if (!beat.ok()) return beat.status();
  if (!beat->alive) return Status(Code::conflict, "the run is no longer alive");
  // Not conflict (which means "ended elsewhere"): process_run sets the run to error itself.
  if (beat->stop_requested) return Status(Code::unavailable, std::string(kStoppedByRequest));
  return Status::Ok();
}

Status Scheduler::fail_run(std::int64_t run_id, const std::string& why) {
  return store::transact<bool>(db_, write_tx(soon()),
                               [&](Connection& c) -> Result<bool> {
                                 OO_ASSIGN_OR_RETURN(
                                     bool was_alive,
                                     store_->set_run_status(c, run_id, RunStatus::error, why));
                                 if (was_alive)
                                   OO_RETURN_IF_ERROR(store_->cascade_run_error(c, run_id, why));
                                 return was_alive;
                               })
      .status();
}

Result<Run> Scheduler::process_run(std::int64_t run_id, const ProgressFn& progress,
                                   const std::atomic<bool>* cancel) {
  struct Timed {
    DurationHistogram& h;
    std::chrono::steady_clock::time_point from;
    ~Timed() { h.observe(std::chrono::steady_clock::now() - from); }
  } timed{run_seconds_, std::chrono::steady_clock::now()};
  std::mutex mu;
  Status first_error;
  bool run_ended = false;
  auto worker = [&] {
    for (;;) {
      {
        std::lock_guard lock(mu);
        if (!first_error.ok() || run_ended) return;
        if (cancel && cancel->load()) {
          first_error = Status(Code::unavailable, "stopped: the process is shutting down");
          return;
        }
        if (stop_asked(run_id)) {
          first_error = Status(Code::unavailable, std::string(kStoppedByRequest));
          return;
        }
      }
      const auto batch_start = std::chrono::steady_clock::now();
      auto claims = claim(run_id, options_.claim_batch);
      Status st = claims.status();
      if (st.ok() && claims->empty()) return;
      if (st.ok()) st = complete(*claims).status();
      if (st.ok()) st = heartbeat(run_id);
      batch_seconds_.observe(std::chrono::steady_clock::now() - batch_start);
      std::lock_guard lock(mu);
      if (st.code() == Code::conflict) {
        run_ended = true;  // reaped or failed elsewhere: its items are settled there
      } else if (!st.ok() && first_error.ok()) {
        first_error = st;
      } else if (progress) {
        auto p = store::transact<Progress>(
            db_, read_tx(soon()), [&](Connection& c) { return store_->run_progress(c, run_id); });
        if (p.ok()) progress(*p);
      }
    }
  };
  // Batch boundary zero: a stop asked for before processing began (say while the run was
  // being created) ends it before its first claim. A run no longer alive, or a failed
  // heartbeat, is left to the first batch, which meets it again.
  if (Status st = heartbeat(run_id);
      st.code() == Code::unavailable && st.message() == kStoppedByRequest) {
    first_error = st;
  }
  std::vector<std::thread> threads;
  for (int i = 1; i < options_.workers && first_error.ok(); ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return end_run(run_id, first_error, run_ended);
}

Result<Run> Scheduler::end_run(std::int64_t run_id, const Status& first_error, bool run_ended) {
  {
    std::lock_guard lock(stop_mu_);
    stop_asked_.erase(run_id);
  }
  if (!first_error.ok()) {
    (void)fail_run(run_id, first_error.message());
    runs_failed_.fetch_add(1);
    return first_error;
  }
  if (!run_ended) {
    OO_RETURN_IF_ERROR(store::transact<bool>(db_, write_tx(soon()), [&](Connection& c) {
                         return store_->set_run_status(c, run_id, RunStatus::done, "");
                       }).status());
  }
  (run_ended ? runs_ended_ : runs_done_).fetch_add(1);
  return get_run(run_id, soon());
}

Result<ReapReport> Scheduler::reap(Clock::time_point deadline) {
  auto reaped = store::transact<ReapReport>(
      db_, write_tx(deadline), [&](Connection& c) -> Result<ReapReport> {
        ReapReport report;
        OO_ASSIGN_OR_RETURN(auto dead, store_->dead_runs(c, options_.run_timeout.count()));
        for (auto run_id : dead) {
          OO_RETURN_IF_ERROR(store_->cascade_run_error(c, run_id, "owner stopped heart-beating"));
        }
        report.dead_runs = static_cast<std::int64_t>(dead.size());
        OO_ASSIGN_OR_RETURN(report.aborted_waiting, store_->orphan_waits(c));
        OO_ASSIGN_OR_RETURN(report.released_processing, store_->expired_leases(c));
        return report;
      });
  // After the commit: a re-run transaction must not count twice.
  if (reaped.ok()) {
    dead_runs_.fetch_add(static_cast<std::uint64_t>(reaped->dead_runs));
    orphan_waits_.fetch_add(static_cast<std::uint64_t>(reaped->aborted_waiting));
    expired_leases_.fetch_add(static_cast<std::uint64_t>(reaped->released_processing));
  }
  return reaped;
}

Result<Run> Scheduler::get_run(std::int64_t run_id, Clock::time_point deadline) {
  return store::transact<Run>(db_, read_tx(deadline), [&](Connection& c) -> Result<Run> {
    OO_ASSIGN_OR_RETURN(auto run, store_->get_run(c, run_id));
    if (!run) return Status(Code::not_found, fmt::format("run {} does not exist", run_id));
    return std::move(*run);
  });
}

Result<std::vector<Run>> Scheduler::list_runs(std::optional<RunStatus> status, int limit,
                                              Clock::time_point deadline) {
  if (limit < 1 || limit > kMaxListLimit)
    return Status(Code::invalid_request, "invalid request",
                  {{"limit", fmt::format("must be from 1 to {}", kMaxListLimit)}});
  return store::transact<std::vector<Run>>(
      db_, read_tx(deadline), [&](Connection& c) { return store_->list_runs(c, status, limit); });
}

Result<std::vector<ScheduleItem>> Scheduler::list_items(const ItemFilter& filter,
                                                        Clock::time_point deadline) {
  if (filter.limit < 1 || filter.limit > kMaxListLimit)
    return Status(Code::invalid_request, "invalid request",
                  {{"limit", fmt::format("must be from 1 to {}", kMaxListLimit)}});
  return store::transact<std::vector<ScheduleItem>>(
      db_, read_tx(deadline), [&](Connection& c) { return store_->list_items(c, filter); });
}

Result<std::vector<ProductionOrder>> Scheduler::list_production_orders(
    const std::optional<std::string>& site_code, std::int64_t after, int limit,
    Clock::time_point deadline) {
  if (limit < 1 || limit > kMaxListLimit)
    return Status(Code::invalid_request, "invalid request",
                  {{"limit", fmt::format("must be from 1 to {}", kMaxListLimit)}});
  return store::transact<std::vector<ProductionOrder>>(db_, read_tx(deadline), [&](Connection& c) {
    return store_->list_production(c, site_code, after, limit);
  });
}

Result<std::vector<OrderKey>> Scheduler::stuck_orders(Clock::time_point deadline) {
  return store::transact<std::vector<OrderKey>>(db_, read_tx(deadline), [&](Connection& c) {
    return store_->stuck_orders(c, options_.max_attempts);
  });
}

Result<std::vector<ExhaustedKey>> Scheduler::list_exhausted(const ExhaustedFilter& filter,
                                                            Clock::time_point deadline) {
  if (filter.limit < 1 || filter.limit > kMaxListLimit)
    return Status(Code::invalid_request, "invalid request",
                  {{"limit", fmt::format("must be from 1 to {}", kMaxListLimit)}});
  return store::transact<std::vector<ExhaustedKey>>(db_, read_tx(deadline), [&](Connection& c) {
    return store_->list_exhausted(c, filter, options_.max_attempts);
  });
}

Result<RequeueOutcome> Scheduler::requeue(const std::vector<OrderKey>& orders, bool dry_run,
                                          Clock::time_point deadline,
                                          const std::optional<std::string>& idem) {
  OO_RETURN_IF_ERROR(check_requeue(orders));
  OO_RETURN_IF_ERROR(check_request_key(idem));
  const std::set<OrderKey> unique(orders.begin(), orders.end());
  const std::vector<OrderKey> keys(unique.begin(), unique.end());  // key order = lock order
  const int max_attempts = options_.max_attempts;
  if (dry_run) {
    return store::transact<RequeueOutcome>(
        db_, read_tx(deadline), [&](Connection& c) -> Result<RequeueOutcome> {
          RequeueOutcome out;
          out.dry_run = true;
          for (const OrderKey& k : keys) {
            OO_ASSIGN_OR_RETURN(store::KeyState s, store_->key_state(c, k));
            if (auto why = requeue_refusal(s, max_attempts)) {
              out.skipped.push_back({k, std::move(*why)});
            } else {
              out.requeued.push_back(k);
            }
          }
          return out;
        });
  }
  // One scope for the route, as for runs. The answer is a run receipt's skipped text, a
  // re-queued key's reason being "requeued".
  std::optional<store::RequestKey> rkey;
  std::string request;
  if (idem) {
    rkey = store::RequestKey{store::RequestRoute::schedule_requeue, "", *idem};
    request = keys_json(keys);
  }
  store::ReceiptsStore receipts(db_.dialect());
  bool waited_on_key = false;
  auto done = store::transact<RequeueOutcome>(
      db_, write_tx(deadline), [&](Connection& c) -> Result<RequeueOutcome> {
        if (rkey) {
          auto stored = receipts.begin(c, *rkey, request);
          waited_on_key = !stored.ok() && stored.status().code() == Code::lock_timeout;
          if (!stored.ok()) return stored.status();
          if (*stored) return replayed_requeue(**stored);
        }
        RequeueOutcome out;
        std::vector<Skipped> answer;
        for (const OrderKey& k : keys) {
          OO_ASSIGN_OR_RETURN(bool requeued, store_->requeue_key(c, k, max_attempts));
          if (requeued) {
            out.requeued.push_back(k);
            answer.push_back({k, "requeued"});
            continue;
          }
          OO_ASSIGN_OR_RETURN(store::KeyState s, store_->key_state(c, k));
          // Not re-queued, so some reason holds (a concurrent re-queue: not_exhausted now).
          out.skipped.push_back({k, requeue_refusal(s, max_attempts).value_or("not_exhausted")});
          answer.push_back(out.skipped.back());
        }
        if (rkey) OO_RETURN_IF_ERROR(receipts.answer(c, *rkey, skipped_text(answer)));
        return out;
      });
  if (!done.ok()) return in_progress_if_waited(done.status(), waited_on_key);
  return done;
}

bool Scheduler::stop_asked(std::int64_t run_id) {
  std::lock_guard lock(stop_mu_);
  return stop_asked_.contains(run_id);
}

Result<Run> Scheduler::request_stop(std::int64_t run_id, Clock::time_point deadline) {
  auto ended = [&](const Run& run) {
    return Status(Code::conflict, fmt::format("run {} has ended ({}); there is nothing to stop",
                                              run_id, to_string(run.status)));
  };
  // A read first (it waits for no writer): unknown and ended runs are answered at once.
  OO_ASSIGN_OR_RETURN(Run before, get_run(run_id, deadline));
  if (before.status == RunStatus::done || before.status == RunStatus::error) return ended(before);
  {
    std::lock_guard lock(stop_mu_);
    stop_asked_.insert(run_id);
  }
  auto marked = store::transact<bool>(
      db_, write_tx(deadline), [&](Connection& c) { return store_->request_stop(c, run_id); });
  if (!marked.ok()) return marked.status();
  OO_ASSIGN_OR_RETURN(Run run, get_run(run_id, deadline));
  // Ended meanwhile: by this request when this process ran it (the stop was seen before the
  // mark could be written), else it ended on its own.
  if (!*marked && !(run.status == RunStatus::error && run.error == kStoppedByRequest))
    return ended(run);
  return run;
}

SchedulerStats Scheduler::stats() const {
  SchedulerStats s;
  s.items_produced = items_produced_.load();
  s.items_failed = items_failed_.load();
  s.items_lost = items_lost_.load();
  s.runs_done = runs_done_.load();
  s.runs_failed = runs_failed_.load();
  s.runs_ended = runs_ended_.load();
  s.dead_runs = dead_runs_.load();
  s.orphan_waits = orphan_waits_.load();
  s.expired_leases = expired_leases_.load();
  s.run_seconds = run_seconds_.snapshot();
  s.batch_seconds = batch_seconds_.snapshot();
  return s;
}

}  // namespace onceorder
