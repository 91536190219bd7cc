// Processes frozen with SIGSTOP for as long as a Frozen lives (a database backend, to stand
// for a server cut off by a partition): woken on the way out whatever the test's outcome, and
// after `at_most` in any case, so that code that waits for them unbounded fails its test
// instead of hanging it.
#pragma once

#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace onceorder::testing {

class Frozen {
 public:
  explicit Frozen(std::vector<pid_t> pids,
                  std::chrono::milliseconds at_most = std::chrono::seconds(6)) {
    for (pid_t pid : pids)
      if (pid > 0 && ::kill(pid, SIGSTOP) == 0) pids_.push_back(pid);
    if (pids_.empty()) return;
    watchdog_ = std::thread([this, at_most] {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, at_most, [this] { return woken_; });
      wake_locked();
    });
  }
  ~Frozen() { wake(); }
  Frozen(const Frozen&) = delete;
  Frozen& operator=(const Frozen&) = delete;

  // How many processes were frozen (those that were not could not be signalled).
  std::size_t frozen() const { return pids_.size(); }
  void wake() {
    {
      std::lock_guard lock(mu_);
      wake_locked();
    }
    cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
  }

 private:
  void wake_locked() {
    if (!woken_)
      for (pid_t pid : pids_) ::kill(pid, SIGCONT);
    woken_ = true;
  }
  std::vector<pid_t> pids_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  std::thread watchdog_;
};

}  // namespace onceorder::testing
