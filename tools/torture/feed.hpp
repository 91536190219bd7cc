// The torture harness's outbox clients (docs/EVENTS.md):
//
// - the feed consumer: a thread that follows GET /v1/events with long polls from cursor "0"
//   through every fault, on either `serve`, going on from its last position after an error,
//   and saving that position now and then as the named consumer `torture`; every page it gets
//   is written to the history (`feed`), every save (`consumer`);
// - the endpoints' set-up: the at_least_once and at_most_once endpoints, all types, from "0";
// - the operator after healing: answers every in_doubt delivery truthfully from the
//   receiver's record, redelivers dead ones, and waits until nothing is left to send.
//
// Thread-safety: FeedConsumer runs its own thread; seen() and position() may be read from any
// thread. The functions run on the caller's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster.hpp"
#include "history.hpp"
#include "receiver.hpp"
#include "workload.hpp"

namespace onceorder::torture {

class FeedConsumer {
 public:
  FeedConsumer(Targets targets, HistoryWriter& history, std::uint64_t seed);
  ~FeedConsumer();  // stops
  void start();
  // Stops following, saves the position once more and reads it back (both in the history).
  void stop();
  std::int64_t seen() const { return seen_; }

 private:
  void loop();
  int save(std::size_t target);  // the answer's status, 0 for none

  Targets targets_;
  HistoryWriter& history_;
  std::uint64_t seed_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> seen_{0};
  std::string after_ = "0";  // the consumer thread's, then stop()'s
};

// PUTs one endpoint per receiver (its URL, secret and mode; all types; from "0"). The
// receivers of mode `poller` get none: the naive poller sends to them itself.
bool set_up_endpoints(const Targets& targets, const std::vector<Receiver*>& receivers,
                      HistoryWriter& history);

// The operator after healing (see above), until every endpoint has a delivery of every event,
// none of them pending, sending, dead or in doubt, the feed consumer has seen every event, and
// the number of events stayed the same for a second; or until `wait` passes. Returns what was
// left ("" when nothing), which is also written to the history.
std::string settle_outbox(const Targets& targets, const std::vector<Receiver*>& receivers,
                          const FeedConsumer* feed, const Database& db, HistoryWriter& history,
                          std::chrono::seconds wait);

}  // namespace onceorder::torture
