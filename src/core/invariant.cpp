#include "onceorder/core/invariant.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>

namespace onceorder {

namespace {

// Unique in the process and unlikely to repeat across processes: the time and a counter.
std::string new_reference() {
  static std::atomic<std::uint32_t> counter{0};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  return fmt::format("inv-{:x}-{:x}", ms, counter.fetch_add(1, std::memory_order_relaxed));
}

}  // namespace

void invariant_failed(std::string_view condition, std::string_view file, int line,
                      std::string_view message) {
  std::string reference = new_reference();
  spdlog::error("msg=\"invariant violated\" reference={} condition=\"{}\" at={}:{} detail=\"{}\"",
                reference, condition, file, line, message);
  throw InvariantViolation(std::move(reference),
                           fmt::format("invariant violated: {} ({}:{}){}{}", condition, file, line,
                                       message.empty() ? "" : ": ", message));
}

}  // namespace onceorder
