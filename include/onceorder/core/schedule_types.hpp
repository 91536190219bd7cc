// The scheduling domain's values: business keys, source orders, runs, schedule items, claims
// and production orders. Plain data shared by the store and the service layers (and by
// clients of the library), below both; no I/O. Thread-safety: values, no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/progress.hpp"
#include "onceorder/core/schedule_status.hpp"

namespace onceorder {

struct OrderKey {
  std::string site_code;
  std::string order_no;
  std::string lot_no;
  auto operator<=>(const OrderKey&) const = default;
};

struct SourceOrder {
  OrderKey key;
  std::int64_t quantity = 0;
};

struct RunCounts {
  std::int64_t wait = 0, processing = 0, success = 0, failed = 0, aborted = 0;
};

struct Run {
  std::int64_t run_id = 0;
  std::string kind;  // batch | manual | legacy
  RunStatus status = RunStatus::creating;
  std::string owner;
  std::string error;
  std::string created_at;
  std::string finished_at;
  RunCounts counts;
};

struct ScheduleItem {
  std::int64_t item_id = 0;
  std::int64_t run_id = 0;
  OrderKey key;
  ItemStatus status = ItemStatus::wait;
  int attempt = 0;
  std::string owner;
  std::string lease_until;
  std::string error;
  std::string created_at;
  std::string updated_at;
};

// A processing item as the stuck-claims list shows it: who holds it, which attempt, until when.
struct ClaimView {
  std::int64_t item_id = 0;
  std::int64_t run_id = 0;
  std::string run_kind;  // batch | manual | legacy (the reaper leaves legacy ones alone)
  OrderKey key;
  int attempt = 0;
  std::string owner;
  std::string lease_until;  // "" when the item has no lease (a fault I8 reports)
  bool expired = false;     // the lease ended (or is missing): the reaper will fail the item
};

struct ProductionOrder {
  OrderKey key;
  std::int64_t item_id = 0;
  std::int64_t quantity = 0;
  std::string document_scope;
  std::int64_t document_value = 0;
  std::string document_number;
  std::string created_at;
};

// A claimed item: the fencing token is (owner, attempt).
struct Claim {
  std::int64_t item_id = 0;
  std::int64_t run_id = 0;
  OrderKey key;
  int attempt = 0;
  std::string owner;
};

struct ItemFilter {
  std::optional<ItemStatus> status;
  std::optional<std::string> site_code, order_no, lot_no;
  std::optional<std::int64_t> run_id;
  std::int64_t after = 0;  // item_id cursor
  int limit = 100;
};

// A key that reached the attempt limit (GET /v1/schedule/exhausted).
struct ExhaustedKey {
  OrderKey key;
  std::int64_t attempts = 0;      // failed items that count against the limit
  std::int64_t failed_total = 0;  // every failed item of the key, re-queued ones too
  std::string requeued_at;        // the last re-queue; "" when never
  std::string last_error;
  std::string last_failed_at;
};

struct ExhaustedFilter {
  std::optional<std::string> site_code;
  OrderKey after;  // the last key of the previous page; empty parts: from the start
  int limit = 100;
};

// One change in an item's history (schedule_item_events, migration 19), written with the
// change itself. `kind`: created | imported | claimed | produced | failed | released |
// aborted | resolved; `status` and `attempt` are the item's after the change, `owner` and
// `lease_until` the claim's (fencing owner and lease end) where it had one, `detail` the
// item's error. `document_number` is the production order's for a `produced` event.
struct ItemEvent {
  std::int64_t event_id = 0;
  std::int64_t item_id = 0;
  std::int64_t run_id = 0;
  std::string lot_no;
  std::string kind;
  std::string status;
  int attempt = 0;
  std::string owner;
  std::string lease_until;
  std::string detail;
  std::string at;
  std::string document_number;
};

// An item with its events, oldest first; `truncated` when there were more than were read.
struct ItemTimeline {
  ScheduleItem item;
  std::vector<ItemEvent> events;
  bool truncated = false;
};

// The one rule for the document scope of a site's production orders ("PO-" + site): the
// standard production step numbers from it, and the console and tests read it back.
std::string production_scope(std::string_view site_code);

}  // namespace onceorder
