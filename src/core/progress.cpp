#include "onceorder/core/progress.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace onceorder {

ProgressBar::ProgressBar(std::ostream& out, bool terminal, std::string unit,
                         std::function<Clock::time_point()> now)
    : out_(out),
      terminal_(terminal),
      unit_(std::move(unit)),
      now_(std::move(now)),
      start_(now_()) {}

std::string ProgressBar::line(std::int64_t done, std::int64_t total) const {
  const double secs = std::chrono::duration<double>(now_() - start_).count();
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
  const int percent =
      total > 0 ? static_cast<int>(std::clamp<std::int64_t>(done * 100 / total, 0, 100)) : 100;
  std::string eta;
  if (rate > 0 && done < total) {
    const double left = static_cast<double>(total - done) / rate;
    if (left >= 1) eta = fmt::format(", {:.0f} s left", left);
  }
  const std::string counts =
      fmt::format("{}/{} {} ({}%), {:.0f}/s{}", done, total, unit_, percent, rate, eta);
  if (!terminal_) return counts;
  constexpr int kWidth = 30;
  const int filled = percent * kWidth / 100;
  return fmt::format("[{}{}] {}", std::string(filled, '#'), std::string(kWidth - filled, '.'),
                     counts);
}

void ProgressBar::update(const Progress& p) {
  const std::int64_t done = p.done, total = p.total;
  const bool end = done >= total;
  if (terminal_) {
    const auto now = now_();
    if (!end && drawn_ && now - drawn_at_ < std::chrono::milliseconds(100)) return;
    drawn_ = true;
    drawn_at_ = now;
    // \x1b[K clears what a longer earlier line left behind.
    out_ << '\r' << line(done, total) << "\x1b[K" << std::flush;
    return;
  }
  const std::int64_t tenth = total > 0 ? std::min<std::int64_t>(done * 10 / total, 10) : 10;
  if (tenth == tenth_) return;
  tenth_ = tenth;
  out_ << line(done, total) << '\n' << std::flush;
}

void ProgressBar::finish() {
  if (terminal_ && drawn_) out_ << '\n' << std::flush;
  drawn_ = false;
}

}  // namespace onceorder
