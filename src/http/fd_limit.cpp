#include "http/fd_limit.hpp"

#include <sys/resource.h>

#include <algorithm>

#include <spdlog/spdlog.h>

namespace onceorder::http {

std::uint64_t raise_open_file_limit() {
  constexpr rlim_t kMost = 1 << 20;  // "unlimited" is not a value Linux accepts here
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  const rlim_t want = std::min(limit.rlim_max, kMost);
  if (limit.rlim_cur < want) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) {
      spdlog::info("raised the open-file limit from {} to {}", before, want);
    } else {
      limit.rlim_cur = before;
    }
  }
  return limit.rlim_cur;
}

int connection_cap(int requested, std::uint64_t soft_limit, int reserved) {
  const auto room = static_cast<std::int64_t>(soft_limit) - reserved;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(requested, room)));
}

}  // namespace onceorder::http
