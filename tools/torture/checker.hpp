// The torture harness's checker: proves OnceOrder's promises from a history (history.hpp)
// and the database's final state, each promise one named check:
//   orders_acked         every acknowledged order is stored as it was answered
//   answers_identical    every answer to one key is the same (status and body), replays
//                        after the faults included
//   orders_whole         every order is wholly there: lines, one reservation ledger entry
//                        per line (and one release once cancelled), source orders, receipt —
//                        all placed or all cancelled
//   orders_from_history  every stored order and receipt comes from a request that was made;
//                        a key that only ever failed stored nothing
//   order_numbers_unique no order number (or id) twice
//   cancels              an acknowledged cancel is stored; `in_production` only when produced
//   cancelled_not_produced no order (or source order) both cancelled and produced
//   documents_acked      every acknowledged number is stored with its title
//   documents_unique     no document number twice in a scope, in the database or in answers
//   documents_contiguous every scope's numbers are 1..last with no gap
//   documents_once       every document request made at most one document (none when it
//                        failed), and every document comes from a request
//   stock_conserved      per SKU: initial + adjustments − placed orders' lines = available,
//                        `reserved` = those lines, the ledger sums to available, each
//                        adjustment applied at most once
//                        (exactly once when acknowledged, never when refused)
//   source_orders        acknowledged source orders are stored; others all or nothing
//   produced_once        at most one production order per source order, each for a
//                        succeeded item
//   production_settled   after healing, every live source order was produced
//   invariants           `onceorder check` reports every invariant at zero
// and the outbox's (docs/EVENTS.md), from the receivers' and the feed consumer's lines:
//   delivered_at_least_once  every event of the database was acted on by each at_least_once
//                        receiver (and the naive poller's) at least once; every copy has the
//                        same body, the database's event, and its event id as Idempotency-Key
//   at_most_once_without_word  each at_most_once receiver (and the naive poller's) acted on
//                        an event at most once more than the operator said "not delivered"
//   feed_exactly_once    the feed consumer saw every event exactly once, in the feed's order
//                        (tx, event_id), and its saved position reads back as saved
//   key_order            per receiver and key, the events' first arrivals in feed order
//   signatures           every request a signed receiver read verifies with its secret
//
// Thread-safety: a plain function of its inputs.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster.hpp"
#include "history.hpp"

namespace onceorder::torture {

struct CheckResult {
  std::string name;
  long violations = 0;
  std::vector<std::string> samples;  // up to 10
  std::vector<std::string> notes;    // what the check saw, violations or not
};

// The receivers and the feed consumer a run had (run.json's "outbox").
struct OutboxSpec {
  struct Receiver {
    std::string name;    // the endpoint's name, as the receive lines carry it
    std::string mode;    // at_least_once, at_most_once, or poller (both promises are its aim)
    std::string secret;  // empty: unsigned
  };
  std::vector<Receiver> receivers;
  bool feed = false;

  nlohmann::json to_json() const;
  static OutboxSpec from_json(const nlohmann::json& j);  // {} when j holds none
};

struct CheckOptions {
  int skus = 6;
  std::string onceorder_bin;  // for `onceorder check`
  int max_attempts = 5;
  OutboxSpec outbox;
};

std::vector<CheckResult> check(const History& history, const Database& db,
                               const CheckOptions& options);

}  // namespace onceorder::torture
