#include "onceorder/core/progress.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace onceorder {
namespace {

using namespace std::chrono_literals;

// A clock the test moves by hand.
struct FakeClock {
  ProgressBar::Clock::time_point t{};
  std::function<ProgressBar::Clock::time_point()> fn() {
    return [this] { return t; };
  }
};

std::size_t count_of(const std::string& text, char c) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), c));
}

TEST(ProgressBar, InALogOneLinePerTenthAndTheEnd) {
  std::ostringstream out;
  FakeClock clock;
  ProgressBar bar(out, false, "items", clock.fn());
  for (int done = 0; done <= 1000; ++done) {
    clock.t += 1ms;
    bar.update({done, 1000});
  }
  bar.finish();
  const std::string text = out.str();
  EXPECT_EQ(count_of(text, '\n'), 11u) << text;  // 0%, 10%, …, 100%
  EXPECT_EQ(count_of(text, '\r'), 0u) << text;
  EXPECT_NE(text.find("500/1000 items (50%)"), std::string::npos) << text;
  EXPECT_NE(text.find("1000/1000 items (100%), 999/s\n"), std::string::npos) << text;
}

TEST(ProgressBar, OnATerminalABarRedrawnInPlaceAtMostEvery100Ms) {
  std::ostringstream out;
  FakeClock clock;
  ProgressBar bar(out, true, "documents", clock.fn());
  for (int done = 0; done < 100; ++done) {
    clock.t += 10ms;  // 1 s in all: about ten redraws, not a hundred
    bar.update({done, 200});
  }
  bar.update({200, 200});  // the end is always drawn
  bar.finish();
  const std::string text = out.str();
  EXPECT_GE(count_of(text, '\r'), 10u) << text;
  EXPECT_LE(count_of(text, '\r'), 12u) << text;
  EXPECT_EQ(count_of(text, '\n'), 1u) << text;  // finish ends the line
  EXPECT_NE(text.find("[#############.................] 90/200 documents (45%)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("[##############################] 200/200 documents (100%)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("s left"), std::string::npos) << text;
}

TEST(ProgressBar, NothingToDoIsDoneAtOnce) {
  std::ostringstream out;
  ProgressBar bar(out, false, "items");
  bar.update({0, 0});
  bar.update({0, 0});
  EXPECT_EQ(out.str(), "0/0 items (100%), 0/s\n");
}

}  // namespace
}  // namespace onceorder
