// Request combining (group commit) for a hot row: requests for the same key that queue up
// behind one another are handed to one caller's thread and carried out as one batch (one
// transaction, one commit flush) instead of one commit each.
//
// Leader/follower: the first request for an idle key runs at once on its own thread, as if
// there were no combiner (no wait, no thread hand-off). Requests for that key arriving while
// it runs queue. When a run ends, up to `max_batch` queued requests (in arrival order) are
// handed to the first of them, whose thread runs them as one batch and hands each waiter its
// answer; then the next queued requests go the same way (a run may take its successors
// earlier, with claim_next, to prepare their work). A waiter still queued at its
// deadline leaves the queue with no answer (nullopt: nothing was done for it); once taken into
// a batch it waits for that batch's answer. A batch runs under the earliest deadline of its
// members, so no member waits on it past its own deadline.
//
// The combiner knows nothing of databases: `RunOne` and `RunBatch` do the work and must give
// each request exactly the answer it would have had alone, in arrival order. An exception
// thrown by them reaches every caller of that run.
//
// Thread-safety: safe to use from many threads at once; one mutex guards the queues (held
// only to queue, hand off and answer, never while a run does its work). Threads are woken
// after it is released: a woken thread that first had to wait for the mutex would wake twice,
// and the next batch's leader is on the key's critical path. The exception is a waiter found past
// its deadline at hand-off, told so under the mutex: rare, and not on the key's path.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onceorder/core/counters.hpp"
#include "onceorder/core/invariant.hpp"

namespace onceorder {

// How many runs had how many requests; counters only ever grow.
struct CombinerStats {
  // Upper bounds of the batch-size buckets (a run of n requests counts in the first bucket
  // with n <= bound). A lone run is a batch of 1.
  static constexpr std::array<std::uint64_t, 9> kBounds{1, 2, 4, 8, 16, 32, 64, 128, 256};
  std::array<std::uint64_t, kBounds.size()> runs{};  // per bucket, not cumulative
  std::uint64_t requests = 0;                        // sum of all batch sizes
  std::uint64_t largest = 0;                         // the largest batch so far
  DurationSnapshot seconds;                          // each run's time, alone or batched
};

template <class Req, class Res>
class Combiner {
 public:
  using Clock = std::chrono::steady_clock;
  using RunOne = std::function<Res(const Req&, Clock::time_point deadline)>;
  using RunBatch =
      std::function<std::vector<Res>(std::span<const Req>, Clock::time_point deadline)>;

  // 256 is the largest `max_batch` the stats' buckets describe.
  Combiner(std::size_t max_batch, RunOne one, RunBatch batch)
      : max_batch_(max_batch < 1 ? 1 : max_batch), one_(std::move(one)), batch_(std::move(batch)) {}
  Combiner(const Combiner&) = delete;
  Combiner& operator=(const Combiner&) = delete;

  // The answer to `req`, run alone or in a batch with other requests for `key`; nullopt when
  // it was still queued at `deadline` (it was never run).
  std::optional<Res> run(std::string_view key, const Req& req, Clock::time_point deadline) {
    // Shared: whoever wakes this thread does so after releasing mu_, and may still hold it
    // then while this thread has already returned.
    const auto self_ptr = std::make_shared<Waiter>(&req, deadline);
    Waiter& self = *self_ptr;
    std::unique_lock lock(mu_);
    auto lane = lanes_.find(key);
    if (lane == lanes_.end()) {
      // Idle key: run now, on this thread, as a batch of one.
      lane = lanes_.emplace(std::string(key), Lane{}).first;
      self.state = State::leading;
      self.batch.push_back(self_ptr);
    } else {
      lane->second.queue.push_back(self_ptr);
    }
    while (self.state == State::queued || self.state == State::claimed) {
      if (self.state == State::claimed) {  // the next batch's leader: no deadline now
        self.cv.wait(lock);
        continue;
      }
      if (self.cv.wait_until(lock, deadline) == std::cv_status::timeout &&
          self.state == State::queued) {
        auto& q = lane->second.queue;
        for (auto it = q.begin(); it != q.end(); ++it) {
          if (*it == self_ptr) {
            q.erase(it);
            break;
          }
        }
        return std::nullopt;
      }
    }
    if (self.state == State::leading) {
      const std::vector<WaiterPtr> batch = std::move(self.batch);
      lock.unlock();
      Outcome outcome = run_batch(batch);
      lock.lock();
      const WaiterPtr next = next_leader(lane);
      answer(batch, outcome);  // this thread's own too: only it reads that once unlocked
      lock.unlock();
      // The next batch's leader first: the key waits for it, not for this batch's members.
      if (next) next->cv.notify_one();
      for (const WaiterPtr& w : batch)
        if (w != self_ptr) w->cv.notify_one();
    } else {
      while (self.state != State::done) self.cv.wait(lock);
    }
    if (self.error) std::rethrow_exception(self.error);
    return std::move(self.result);
  }

  // From inside a run of `key` (RunOne or RunBatch, on the run's own thread): takes now the
  // requests that will be the key's next run, as the end of this run would take them (at
  // most max_batch, in arrival order, those past their deadline told so), so that this run
  // can prepare their work. They run as one batch right after this run ends, and can no
  // longer leave at their deadline. Called again, it returns the same requests. Empty, and
  // nothing taken, when `accept` refuses the requests it would take (or none queue): the end
  // of the run takes them as usual.
  using Accept = std::function<bool(std::span<const Req>)>;
  std::vector<Req> claim_next(std::string_view key, const Accept& accept = {}) {
    std::lock_guard lock(mu_);
    auto lane = lanes_.find(key);
    OO_INVARIANT(lane != lanes_.end(), "claim_next: the key {} is not running", key);
    Lane& l = lane->second;
    if (!l.claimed && !l.queue.empty()) {
      std::vector<Req> would;
      const auto now = Clock::now();
      for (const WaiterPtr& w : l.queue) {
        if (would.size() == max_batch_) break;
        if (w->deadline > now) would.push_back(*w->req);
      }
      if (!accept || accept(would)) {
        l.claimed = take_batch(lane);
        if (l.claimed) l.claimed->state = State::claimed;
      }
    }
    std::vector<Req> out;
    if (l.claimed)
      for (const WaiterPtr& w : l.claimed->batch) out.push_back(*w->req);
    return out;
  }

  // Requests queued for `key` right now (not those running).
  std::size_t waiting(std::string_view key) const {
    std::lock_guard lock(mu_);
    auto lane = lanes_.find(key);
    return lane == lanes_.end() ? 0 : lane->second.queue.size();
  }

  CombinerStats stats() const {
    CombinerStats s;
    for (std::size_t i = 0; i < s.runs.size(); ++i) s.runs[i] = runs_[i].load();
    s.requests = requests_.load();
    s.largest = largest_.load();
    s.seconds = durations_.snapshot();
    return s;
  }

 private:
  // claimed: the leader of a batch taken early (claim_next), waiting for the run to end.
  enum class State { queued, claimed, leading, taken, done };
  struct Waiter;
  using WaiterPtr = std::shared_ptr<Waiter>;
  struct Waiter {
    Waiter(const Req* r, Clock::time_point d) : req(r), deadline(d) {}
    const Req* req;
    Clock::time_point deadline;
    State state = State::queued;
    std::vector<WaiterPtr> batch;  // set when leading: itself first, then the others
    std::optional<Res> result;
    std::exception_ptr error;
    std::condition_variable cv;
  };
  struct Lane {
    std::deque<WaiterPtr> queue;  // arrival order
    WaiterPtr claimed;            // the next run's leader, when claim_next took it early
  };
  using Lanes = std::map<std::string, Lane, std::less<>>;  // a key is present while it runs

  // With mu_ held, after a run of `lane` ended: the leader of the next run (claimed early,
  // or taken now), to be woken once mu_ is released, or null when the key goes idle.
  WaiterPtr next_leader(typename Lanes::iterator lane) {
    WaiterPtr leader = std::move(lane->second.claimed);
    if (!leader) leader = take_batch(lane);
    if (!leader) {
      lanes_.erase(lane);
      return nullptr;
    }
    leader->state = State::leading;
    return leader;
  }

  // With mu_ held: the next waiters become a batch led by the first of them (null when none
  // queue). Waiters already past their deadline are told so (nullopt) instead of being
  // taken: the batch's deadline is its earliest one.
  WaiterPtr take_batch(typename Lanes::iterator lane) {
    auto& q = lane->second.queue;
    std::vector<WaiterPtr> batch;
    const auto now = Clock::now();
    while (!q.empty() && batch.size() < max_batch_) {
      WaiterPtr w = std::move(q.front());
      q.pop_front();
      if (w->deadline <= now) {
        w->state = State::done;
        w->cv.notify_one();
        continue;
      }
      w->state = State::taken;
      batch.push_back(w);
    }
    if (batch.empty()) return nullptr;
    WaiterPtr leader = batch.front();
    leader->batch = std::move(batch);
    return leader;
  }

  struct Outcome {
    std::vector<Res> answers;
    std::exception_ptr error;
  };

  // On the leader's thread, mu_ not held: runs the batch.
  Outcome run_batch(const std::vector<WaiterPtr>& batch) {
    Clock::time_point deadline = batch.front()->deadline;
    for (const WaiterPtr& w : batch) deadline = std::min(deadline, w->deadline);
    Outcome out;
    const auto started = Clock::now();
    try {
      // Inside the try: a broken hand-off reaches every member, none is left waiting.
      OO_INVARIANT(!batch.empty() && batch.size() <= max_batch_, "a batch of {}", batch.size());
      for (const WaiterPtr& w : batch) {
        OO_INVARIANT(w->state == (w == batch.front() ? State::leading : State::taken),
                     "a batch member neither leads nor was taken");
      }
      if (batch.size() == 1) {
        out.answers.push_back(one_(*batch.front()->req, deadline));
      } else {
        std::vector<Req> reqs;
        reqs.reserve(batch.size());
        for (const WaiterPtr& w : batch) reqs.push_back(*w->req);
        out.answers = batch_(reqs, deadline);
        OO_INVARIANT(out.answers.size() == batch.size(), "RunBatch answered {} of {}",
                     out.answers.size(), batch.size());
      }
    } catch (...) {
      out.error = std::current_exception();
    }
    count(batch.size(), Clock::now() - started);
    return out;
  }

  // With mu_ held: every member's answer, to be woken once mu_ is released.
  static void answer(const std::vector<WaiterPtr>& batch, Outcome& outcome) {
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Waiter& w = *batch[i];
      if (outcome.error)
        w.error = outcome.error;
      else
        w.result.emplace(std::move(outcome.answers[i]));
      w.state = State::done;
    }
  }

  void count(std::size_t n, Clock::duration took) {
    durations_.observe(took);
    std::size_t b = 0;
    while (b + 1 < CombinerStats::kBounds.size() && n > CombinerStats::kBounds[b]) ++b;
    runs_[b].fetch_add(1, std::memory_order_relaxed);
    requests_.fetch_add(n, std::memory_order_relaxed);
    auto seen = largest_.load(std::memory_order_relaxed);
    while (n > seen && !largest_.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
    }
  }

  const std::size_t max_batch_;
  const RunOne one_;
  const RunBatch batch_;
  mutable std::mutex mu_;
  Lanes lanes_;  // guarded by mu_
  std::array<std::atomic<std::uint64_t>, CombinerStats::kBounds.size()> runs_{};
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> largest_{0};
  DurationHistogram durations_;
};

}  // namespace onceorder
