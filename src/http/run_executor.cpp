#include "http/run_executor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <exception>

namespace onceorder::http {

RunExecutor::~RunExecutor() {
  stop();
  join();
}

RunExecutor::Slot::~Slot() {
  if (owner_ == nullptr) return;
  std::lock_guard lock(owner_->mu_);
  --owner_->reserved_;
}

Result<RunExecutor::Slot> RunExecutor::reserve() {
  std::lock_guard lock(mu_);
  if (cancel_.load()) return Status(Code::unavailable, "the server is stopping");
  join_finished();
  if (reserved_ + static_cast<int>(workers_.size()) >= kMaxBackground) {
    return Status(Code::busy, fmt::format("{} runs are already processing in the background; "
                                          "retry later or use ?wait=true",
                                          kMaxBackground));
  }
  ++reserved_;
  return Slot(this);
}

void RunExecutor::launch(Slot slot, std::int64_t run_id) {
  std::lock_guard lock(mu_);
  slot.owner_ = nullptr;
  --reserved_;
  Worker& w = workers_.emplace_back();
  w.thread = std::thread([this, &w, run_id] {
    try {
      auto run = process(run_id);
      if (!run.ok()) {
        spdlog::warn("background run {} ended: {}", run_id, run.status().to_string());
      }
    } catch (const std::exception& e) {
      spdlog::error("background run {} failed: {}", run_id, e.what());
    }
    w.done.store(true);
  });
}

Result<Run> RunExecutor::process(std::int64_t run_id) {
  return scheduler_.process_run(run_id, {}, &cancel_);
}

void RunExecutor::stop() { cancel_.store(true); }

void RunExecutor::join() {
  for (;;) {
    std::list<Worker> joining;
    {
      std::lock_guard lock(mu_);
      if (workers_.empty()) return;
      joining.splice(joining.end(), workers_);
    }
    for (Worker& w : joining) w.thread.join();
  }
}

void RunExecutor::join_finished() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->done.load()) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace onceorder::http
