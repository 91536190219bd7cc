#include "onceorder/core/invariant.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>

namespace onceorder {
namespace {

// Captures the default logger's lines while alive.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

int checked(int x) {
  OO_INVARIANT(x > 0, "x is {}", x);
  return x;
}

TEST(InvariantTest, HoldsQuietly) {
  CapturedLog log;
  EXPECT_EQ(checked(3), 3);
  EXPECT_EQ(log.text(), "");
}

TEST(InvariantTest, ATrippedOneThrowsAndLogsItsReference) {
  CapturedLog log;
  std::string reference;
  try {
    (void)checked(-2);
    ADD_FAILURE() << "no exception";
  } catch (const InvariantViolation& e) {
    reference = e.reference();
    EXPECT_NE(std::string(e.what()).find("x > 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x is -2"), std::string::npos) << e.what();
  }
  ASSERT_FALSE(reference.empty());
  const std::string text = log.text();
  EXPECT_NE(text.find("reference=" + reference), std::string::npos) << text;
  EXPECT_NE(text.find("[error]"), std::string::npos) << text;
  EXPECT_NE(text.find("x is -2"), std::string::npos) << text;
}

TEST(InvariantTest, EachFailureHasItsOwnReference) {
  CapturedLog log;
  std::string first;
  std::string second;
  try {
    OO_INVARIANT(false);
  } catch (const InvariantViolation& e) {
    first = e.reference();
  }
  try {
    OO_INVARIANT(1 + 1 == 3, "arithmetic");
  } catch (const InvariantViolation& e) {
    second = e.reference();
  }
  EXPECT_FALSE(first.empty());
  EXPECT_NE(first, second);
}

// A logic_error, so that code catching those (the combiner hands an exception to every
// caller of its run) treats it as the bug it is.
TEST(InvariantTest, IsALogicError) {
  CapturedLog log;
  EXPECT_THROW(OO_INVARIANT(false, "broken"), std::logic_error);
}

}  // namespace
}  // namespace onceorder
