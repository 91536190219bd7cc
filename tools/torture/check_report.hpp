// The checker's report while it is being made: checks by name, in the order they were first
// named, each with its violations (the first ten as samples) and notes (what it saw). Shared
// by the checker's files (checker.cpp, checker_outbox.cpp).
//
// Thread-safety: not thread-safe; one checker fills it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "checker.hpp"

namespace onceorder::torture {

class Report {
 public:
  CheckResult& operator[](const std::string& name) {
    for (auto& c : checks_)
      if (c.name == name) return c;
    checks_.push_back({name, 0, {}, {}});
    return checks_.back();
  }
  template <class... Args>
  void violation(const std::string& name, fmt::format_string<Args...> f, Args&&... args) {
    CheckResult& c = (*this)[name];
    ++c.violations;
    if (c.samples.size() < 10) c.samples.push_back(fmt::format(f, std::forward<Args>(args)...));
  }
  template <class... Args>
  void note(const std::string& name, fmt::format_string<Args...> f, Args&&... args) {
    (*this)[name].notes.push_back(fmt::format(f, std::forward<Args>(args)...));
  }
  std::vector<CheckResult> take() { return std::move(checks_); }

 private:
  std::vector<CheckResult> checks_;
};

// The outbox's checks (checker_outbox.cpp): delivered_at_least_once, at_most_once_without_word,
// feed_exactly_once, key_order, signatures.
void check_outbox(const History& history, const Database& db, const CheckOptions& options,
                  Report& report);

}  // namespace onceorder::torture
