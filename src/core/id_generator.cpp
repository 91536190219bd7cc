#include "onceorder/core/id_generator.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>

namespace onceorder {
namespace {

constexpr std::int64_t kSequenceMask = (std::int64_t{1} << kSequenceBits) - 1;

std::int64_t system_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

IdParts decode_id(std::int64_t id) {
  return IdParts{(id >> (kNodeBits + kSequenceBits)) + kIdEpochMs,
                 static_cast<int>((id >> kSequenceBits) & kMaxNode),
                 static_cast<int>(id & kSequenceMask)};
}

std::string order_number(std::int64_t id) {
  static constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  std::string out(13, '0');
  auto v = static_cast<std::uint64_t>(id);
  for (int i = 12; i >= 0; --i, v >>= 5) out[static_cast<size_t>(i)] = kCrockford[v & 31];
  return "O-" + out;
}

IdGenerator::IdGenerator(int node, std::int64_t not_before_ms, MsClock clock)
    : node_(node),
      clock_(clock ? std::move(clock) : MsClock(system_ms)),
      last_(((not_before_ms - kIdEpochMs) << kSequenceBits) | kSequenceMask) {}

Result<std::int64_t> IdGenerator::next() {
  std::int64_t last = last_.load(std::memory_order_relaxed);
  for (;;) {
    const std::int64_t now = clock_() - kIdEpochMs;
    const std::int64_t last_ms = last >> kSequenceBits;
    std::int64_t next;
    if (now > last_ms) {
      next = now << kSequenceBits;
    } else if (now == last_ms) {
      if ((last & kSequenceMask) == kSequenceMask) {  // 16384 ids this millisecond: wait
        std::this_thread::yield();
        last = last_.load(std::memory_order_relaxed);
        continue;
      }
      next = last + 1;
    } else if (last_ms - now > 5) {
      return Status(Code::unavailable,
                    fmt::format("the clock is {} ms behind the last issued id time; refusing to "
                                "issue ids until it catches up",
                                last_ms - now));
    } else {
      // A few ms behind (e.g. a new lease's floor, or NTP slewing): wait it out.
      std::this_thread::yield();
      last = last_.load(std::memory_order_relaxed);
      continue;
    }
    if (last_.compare_exchange_weak(last, next, std::memory_order_relaxed)) {
      return (next >> kSequenceBits) << (kNodeBits + kSequenceBits) |
             (static_cast<std::int64_t>(node_) << kSequenceBits) | (next & kSequenceMask);
    }
  }
}

}  // namespace onceorder
