// Progress of long work (a batch run, a legacy import, a dedup): the work reports how far it
// is through a ProgressFn, and the command line shows it with a ProgressBar — a bar redrawn in
// place on a terminal, plain lines (one per tenth) in a log, where a redrawn line would be
// noise.
//
// Thread-safety: a ProgressBar is used from one thread at a time (the work calls its
// ProgressFn from the thread doing the work).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace onceorder {

struct Progress {
  std::int64_t done = 0;
  std::int64_t total = 0;  // known before the first report
};

// Called with the units done so far (a run: after each completed batch; an import: after
// each row). A retried transaction may report the same units again. May be empty: no one
// is watching.
using ProgressFn = std::function<void(const Progress&)>;

class ProgressBar {
 public:
  using Clock = std::chrono::steady_clock;
  // `unit` names what is counted ("items", "documents"); `terminal` chooses the bar over
  // lines (isatty of the stream's file); `now` is the clock (tests pass their own).
  ProgressBar(std::ostream& out, bool terminal, std::string unit,
              std::function<Clock::time_point()> now = Clock::now);

  // Shows `p`: on a terminal at most every 100 ms and always at the end, in a log when a new
  // tenth is reached and at the end.
  void update(const Progress& p);
  // Ends the bar's line on a terminal (nothing in a log).
  void finish();
  ProgressFn fn() {
    return [this](const Progress& p) { update(p); };
  }

 private:
  std::string line(std::int64_t done, std::int64_t total) const;

  std::ostream& out_;
  const bool terminal_;
  const std::string unit_;
  const std::function<Clock::time_point()> now_;
  const Clock::time_point start_;
  Clock::time_point drawn_at_{};
  bool drawn_ = false;
  std::int64_t tenth_ = -1;  // the last tenth printed in a log
};

}  // namespace onceorder
