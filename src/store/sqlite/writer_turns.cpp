#include "store/sqlite/writer_turns.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

namespace onceorder::store::sqlite {

std::shared_ptr<WriterTurns> WriterTurns::of(const std::string& path) {
  static std::mutex registry_mu;
  static std::map<std::string, std::weak_ptr<WriterTurns>> registry;
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  const std::string key = ec ? path : canonical.string();
  std::lock_guard lock(registry_mu);
  std::weak_ptr<WriterTurns>& slot = registry[key];
  std::shared_ptr<WriterTurns> turns = slot.lock();
  if (!turns) {
    turns = std::make_shared<WriterTurns>();
    slot = turns;
  }
  return turns;
}

bool WriterTurns::take(std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(mu_);
  const std::uint64_t ticket = next_ticket_++;
  waiting_.push_back(ticket);
  const bool mine =
      cv_.wait_until(lock, until, [&] { return !held_ && waiting_.front() == ticket; });
  if (!mine) {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), ticket));
    cv_.notify_all();  // the writer behind this one may be first now
    return false;
  }
  waiting_.pop_front();
  held_ = true;
  return true;
}

void WriterTurns::give_back() {
  {
    std::lock_guard lock(mu_);
    held_ = false;
  }
  cv_.notify_all();
}

}  // namespace onceorder::store::sqlite
