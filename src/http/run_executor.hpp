// Processes manual schedule runs for the HTTP layer: in the request's own worker
// (`POST /v1/schedule/runs`, which answers when the run finished) or, for `?wait=false`,
// on a thread of its own, at most kMaxBackground at a time. stop() ends every run in
// progress cleanly at its next batch boundary: process_run sets it `error` (its waiting
// orders become candidates again) instead of leaving it to the reaper.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <thread>
#include <utility>

#include "onceorder/service/scheduling.hpp"

namespace onceorder::http {

class RunExecutor {
 public:
  static constexpr int kMaxBackground = 4;

  explicit RunExecutor(Scheduler& scheduler) : scheduler_(scheduler) {}
  ~RunExecutor();  // stop() and join()
  RunExecutor(const RunExecutor&) = delete;
  RunExecutor& operator=(const RunExecutor&) = delete;

  // A place for one background run, taken before the run is created so that a full
  // executor refuses before anything is written. Given back unless launched.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)) {}
    Slot& operator=(Slot&&) = delete;
    ~Slot();

   private:
    friend class RunExecutor;
    explicit Slot(RunExecutor* owner) : owner_(owner) {}
    RunExecutor* owner_;
  };

  // busy when kMaxBackground runs are in progress; unavailable once stopping.
  Result<Slot> reserve();
  // Processes `run_id` on its own thread.
  void launch(Slot slot, std::int64_t run_id);
  // Processes `run_id` on the calling thread.
  Result<Run> process(std::int64_t run_id);

  // Asks every run in progress to end; returns at once.
  void stop();
  // Waits for the background threads (after stop()).
  void join();

 private:
  struct Worker {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void join_finished();  // mu_ held

  Scheduler& scheduler_;
  std::atomic<bool> cancel_{false};
  std::mutex mu_;
  int reserved_ = 0;           // guarded by mu_
  std::list<Worker> workers_;  // guarded by mu_; list: a Worker never moves
};

}  // namespace onceorder::http
