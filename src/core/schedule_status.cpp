#include "onceorder/core/schedule_status.hpp"

#include <cctype>
#include <string>

namespace onceorder {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view to_string(ItemStatus s) {
  switch (s) {
    case ItemStatus::wait:
      return "wait";
    case ItemStatus::processing:
      return "processing";
    case ItemStatus::success:
      return "success";
    case ItemStatus::failed:
      return "failed";
    case ItemStatus::aborted:
      return "aborted";
  }
  return "wait";
}

std::string_view to_string(RunStatus s) {
  switch (s) {
    case RunStatus::creating:
      return "creating";
    case RunStatus::running:
      return "running";
    case RunStatus::done:
      return "done";
    case RunStatus::error:
      return "error";
  }
  return "error";
}

std::string_view to_string(RunKind k) { return k == RunKind::batch ? "batch" : "manual"; }

std::optional<ItemStatus> parse_item_status(std::string_view text) {
  const auto t = lower(text);
  for (auto s : kAllItemStatuses)
    if (t == to_string(s)) return s;
  return std::nullopt;
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
  const auto t = lower(text);
  for (auto s : {RunStatus::creating, RunStatus::running, RunStatus::done, RunStatus::error})
    if (t == to_string(s)) return s;
  return std::nullopt;
}

}  // namespace onceorder
