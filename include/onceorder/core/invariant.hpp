// Always-on assertions for state that lives in this process's memory, not in the database:
// the combiner's queues, the cart lanes' counts, the replay memory, a batch's decisions. No
// constraint or transaction guards those; a broken one would otherwise answer wrongly in
// silence. On in every build type (NDEBUG does not remove it), and cheap enough for the hot
// path: the condition is one branch, the message is only formatted when it fails.
//
// A failure logs the condition, the place and the message at error level under a new log
// reference, and throws InvariantViolation carrying that reference. Thrown inside a
// store::transact body, it rolls the transaction back (the connection goes back to the pool,
// which rolls back whatever is open), so nothing commits; the HTTP layer answers 500 with the
// reference, which finds the log line.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace onceorder {

class InvariantViolation : public std::logic_error {
 public:
  InvariantViolation(std::string reference, const std::string& what)
      : std::logic_error(what), reference_(std::move(reference)) {}
  // The reference of the log line that says what broke.
  const std::string& reference() const { return reference_; }

 private:
  std::string reference_;
};

// Logs and throws; not for direct use (OO_INVARIANT).
[[noreturn]] void invariant_failed(std::string_view condition, std::string_view file, int line,
                                   std::string_view message);

}  // namespace onceorder

// OO_INVARIANT(cond) or OO_INVARIANT(cond, "fmt {}", args...).
#define OO_INVARIANT(cond, ...)                                                    \
  do {                                                                             \
    if (!(cond)) [[unlikely]]                                                      \
      ::onceorder::invariant_failed(#cond, __FILE__, __LINE__,                     \
                                    ::onceorder::invariant_message_(__VA_ARGS__)); \
  } while (0)

namespace onceorder {
inline std::string invariant_message_() { return {}; }
template <class... Args>
std::string invariant_message_(fmt::format_string<Args...> format, Args&&... args) {
  return fmt::format(format, std::forward<Args>(args)...);
}
}  // namespace onceorder
