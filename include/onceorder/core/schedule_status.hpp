// The scheduling state machines (seed 000), pure and thread-safe.
//
// An item's status says one thing only. `failed` and `aborted` are the re-schedulable
// statuses: the live-item unique index excludes exactly these (a deny-list), so a status
// added later blocks duplicates by default. A test reads the index predicate back from
// each engine and checks it against `is_reschedulable`.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace onceorder {

enum class ItemStatus { wait, processing, success, failed, aborted };
enum class RunStatus { creating, running, done, error };
enum class RunKind { batch, manual };

inline constexpr std::array kAllItemStatuses = {ItemStatus::wait, ItemStatus::processing,
                                                ItemStatus::success, ItemStatus::failed,
                                                ItemStatus::aborted};

std::string_view to_string(ItemStatus s);
std::string_view to_string(RunStatus s);
std::string_view to_string(RunKind k);
// Case-insensitive ("WAIT", "Wait", "wait").
std::optional<ItemStatus> parse_item_status(std::string_view text);
std::optional<RunStatus> parse_run_status(std::string_view text);

// May another item for the same business key be created while this one exists?
// Only for `failed` (retry) and `aborted` (void). Exhaustive on purpose: a new status
// must be decided here, and the compiler says so.
constexpr bool is_reschedulable(ItemStatus s) {
  switch (s) {
    case ItemStatus::wait:
    case ItemStatus::processing:
    case ItemStatus::success:
      return false;
    case ItemStatus::failed:
    case ItemStatus::aborted:
      return true;
  }
  return false;
}

// A run in `creating` or `running` is alive; its `wait` items are honest work.
constexpr bool is_alive(RunStatus s) { return s == RunStatus::creating || s == RunStatus::running; }

}  // namespace onceorder
