// Replays answered from memory (seed 002's duplicate submissions): a request whose
// idempotency key this process decided moments ago, or is deciding right now, needs no
// database work to be answered.
//
// A request enters with its key before it runs:
//  - if this process remembers a decision for the key (made by a request that entered less
//    than `ttl` ago, in the same `generation`), enter returns it: the caller answers with it
//    as a replay, exactly as the stored receipt would;
//  - if a request with the key is running in this process, enter waits for it: for its
//    decision, or, if it ended without one (busy, an error), for this request's turn to run;
//    at the deadline it gives up (the key is still in progress);
//  - otherwise the request runs, and must leave() when done, with its decision if it made
//    one. So one process runs at most one request per key at a time.
// With a `ttl` of zero nothing is remembered or waited for: enter only counts the requests
// running per key, and leave says whether another one ran alongside.
//
// The caller keeps what is remembered true: only a decision whose transaction committed is
// passed to leave (never an unknown outcome), and the generation changes whenever the memory
// may have come apart from the database (a connection found dead: a fail-over may have lost
// the last commits), which forgets everything remembered before. `ttl` counts from the
// decided request's enter, before its transaction began: never later than its receipt's
// own time, so that the memory ends before the receipt can expire (when `ttl` is at most the
// receipt retention).
//
// Thread-safety: safe to use from many threads at once; one mutex guards it (held only to
// look up, insert and wake, never while a request runs or waits).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "onceorder/core/invariant.hpp"

namespace onceorder {

template <class Key, class Decision>
class RecentAnswers {
 public:
  using Clock = std::chrono::steady_clock;

  // Remembers at most `capacity` decisions (the oldest go first), each for `ttl`.
  RecentAnswers(std::chrono::milliseconds ttl, std::size_t capacity)
      : ttl_(ttl), capacity_(capacity) {}

  struct Entered {
    enum class Kind { run, remembered, gave_up };
    Kind kind = Kind::run;
    std::optional<Decision> decision;  // when remembered
    // When run: the time and generation of its enter, for leave.
    Clock::time_point since{};
    std::uint64_t generation = 0;
  };

  Entered enter(const Key& key, std::uint64_t generation, Clock::time_point deadline) {
    const Clock::time_point since = Clock::now();
    std::unique_lock lock(mu_);
    if (ttl_.count() > 0) {
      for (;;) {
        if (auto d = remembered(key, generation, Clock::now())) {
          remembered_.fetch_add(1, std::memory_order_relaxed);
          return {Entered::Kind::remembered, std::move(d), {}, 0};
        }
        auto it = running_.find(key);
        if (it == running_.end()) break;
        // Another request with the key runs: wait for it to leave, then look again.
        const std::shared_ptr<Flight> flight = it->second;
        ++flight->waiting;
        const bool left =
            flight->left.wait_until(lock, deadline, [&] { return flight->runners == 0; });
        --flight->waiting;
        if (!left) return {Entered::Kind::gave_up, std::nullopt, {}, 0};
      }
    }
    return start(key, since, generation);
  }

  // Counts a request as running without looking at the memory or waiting (for a caller that
  // runs several requests of one key together); leave() it as any other.
  Entered run_now(const Key& key) {
    std::lock_guard lock(mu_);
    return start(key, Clock::now(), 0);
  }

  // After a request that enter() let run: `decision` is its own committed decision, if it
  // made one. Returns whether another request with the key ran in this process meanwhile.
  bool leave(const Key& key, const Entered& entered, std::optional<Decision> decision) {
    std::shared_ptr<Flight> wake;
    bool shared = false;
    {
      std::lock_guard lock(mu_);
      auto it = running_.find(key);
      // Checked before anything changes: a request leaves only after it entered.
      OO_INVARIANT(it != running_.end() && it->second->runners > 0,
                   "a request left without having entered");
      shared = it->second->runners > 1;
      if (--it->second->runners == 0) {
        if (it->second->waiting > 0) wake = it->second;
        running_.erase(it);
      }
      if (decision && ttl_.count() > 0)
        remember(key, std::move(*decision), entered.generation, entered.since + ttl_);
    }
    // Woken after the mutex is released (a woken waiter would otherwise block on it at once).
    if (wake) wake->left.notify_all();
    return shared;
  }

  // Requests waiting for another request with `key` to leave (tests wait for it).
  int waiting(const Key& key) const {
    std::lock_guard lock(mu_);
    auto it = running_.find(key);
    return it == running_.end() ? 0 : it->second->waiting;
  }

  // Replays answered from memory so far.
  std::uint64_t remembered_answers() const { return remembered_.load(std::memory_order_relaxed); }
  // Decisions remembered now (expired ones may still count until the next enter or leave).
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return memory_.size();
  }

 private:
  struct Flight {
    int runners = 0;
    int waiting = 0;
    std::condition_variable left;
  };
  struct Memory {
    Decision decision;
    std::uint64_t generation;
    Clock::time_point until;
  };

  // Under mu_.
  Entered start(const Key& key, Clock::time_point since, std::uint64_t generation) {
    auto [it, inserted] = running_.try_emplace(key, nullptr);
    if (inserted) it->second = std::make_shared<Flight>();
    ++it->second->runners;
    return {Entered::Kind::run, std::nullopt, since, generation};
  }

  std::optional<Decision> remembered(const Key& key, std::uint64_t generation,
                                     Clock::time_point now) {
    expire(now);
    // Each remembered decision is queued once (remember), so that expiring the queue's
    // front forgets exactly one: a mismatch would forget a live one or keep a dead one.
    OO_INVARIANT(memory_.size() == order_.size(), "{} remembered, {} queued", memory_.size(),
                 order_.size());
    auto it = memory_.find(key);
    if (it == memory_.end() || it->second.until <= now) return std::nullopt;
    if (it->second.generation != generation) {
      forget_all();  // every entry of another generation is doubtful alike
      return std::nullopt;
    }
    return it->second.decision;
  }

  void remember(const Key& key, Decision decision, std::uint64_t generation,
                Clock::time_point until) {
    expire(Clock::now());
    auto [it, inserted] =
        memory_.insert_or_assign(key, Memory{std::move(decision), generation, until});
    if (inserted) order_.push_back({until, it});
    while (memory_.size() > capacity_) {
      memory_.erase(order_.front().second);
      order_.pop_front();
    }
  }

  // Drops what expired at the front; an entry behind it may have expired too (entries are
  // queued in the order they were decided, their time counts from their enter), which
  // remembered() checks.
  void expire(Clock::time_point now) {
    while (!order_.empty() && order_.front().first <= now) {
      memory_.erase(order_.front().second);
      order_.pop_front();
    }
  }

  void forget_all() {
    memory_.clear();
    order_.clear();
  }

  const std::chrono::milliseconds ttl_;
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<Flight>> running_;
  std::map<Key, Memory> memory_;
  // Every entry of memory_ once, in the order remembered (the oldest first).
  std::deque<std::pair<Clock::time_point, typename std::map<Key, Memory>::iterator>> order_;
  std::atomic<std::uint64_t> remembered_{0};
};

}  // namespace onceorder
