// The outbox's use cases (docs/EVENTS.md): the feed, named consumers, endpoints and their
// deliveries, and the delivery worker that pushes events to endpoints.
//
// Events are written by the database, in the transaction of their fact (migration 22); this
// module only reads them. A delivery is claimed with a lease and an attempt number and settled
// under that fence, like a schedule item: a worker whose lease ended cannot record anything.
//
// Thread-safety: Outbox is stateless and safe from any thread. A DeliveryWorker runs one
// thread of its own; start/stop from one controlling thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "onceorder/core/event_types.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {
namespace store {
class EventsStore;
}  // namespace store

using OutboxDeadline = store::Clock::time_point;

// Why an endpoint or consumer name, URL, secret or setting is refused (field errors named as
// the API's body fields), or an ok Status. The one home of these rules.
Status check_endpoint_spec(const EndpointSpec& spec);
Status check_feed_name(std::string_view field, std::string_view name);

class Outbox {
 public:
  explicit Outbox(store::Database& db);

  // The feed: up to `limit` events after `after` of `types` (empty: all), in feed order.
  Result<FeedPage> read(FeedPosition after, const std::vector<std::string>& types, int limit,
                        OutboxDeadline deadline);
  // The newest position a reader can see now.
  Result<FeedPosition> head(OutboxDeadline deadline);

  // Named consumers. not_found for an unknown name.
  Result<Consumer> consumer(const std::string& name, OutboxDeadline deadline);
  Result<std::vector<Consumer>> consumers(OutboxDeadline deadline);
  // Sets a consumer's position (creating it: `created`). invalid_request for a position past
  // the feed's head: a reader there would skip the events still to come.
  struct PutConsumer {
    Consumer consumer;
    bool created = false;
  };
  Result<PutConsumer> put_consumer(const std::string& name, FeedPosition after,
                                   OutboxDeadline deadline);
  Status delete_consumer(const std::string& name, OutboxDeadline deadline);

  // Endpoints. put: creates (at spec.after, default the head) or updates (its position is
  // kept); invalid_request for a bad spec; conflict past EventLimits::kMaxEndpoints.
  struct PutEndpoint {
    Endpoint endpoint;
    bool created = false;
  };
  Result<PutEndpoint> put_endpoint(const EndpointSpec& spec, OutboxDeadline deadline);
  Result<Endpoint> endpoint(const std::string& name, OutboxDeadline deadline);
  // Where `onceorder endpoint test` sends, with the secret it signs with (never an API answer).
  struct Target {
    std::string url;
    std::string secret;
  };
  Result<Target> endpoint_target(const std::string& name, OutboxDeadline deadline);
  Result<std::vector<Endpoint>> endpoints(OutboxDeadline deadline);
  Status delete_endpoint(const std::string& name, OutboxDeadline deadline);
  // The endpoint's deliveries with event_id > `after`, by event_id; `status` pending also
  // lists those being sent. not_found for an unknown endpoint.
  Result<std::vector<Delivery>> deliveries(const std::string& endpoint,
                                           std::optional<DeliveryStatus> status, std::int64_t after,
                                           int limit, OutboxDeadline deadline);
  // The operator's word on an in_doubt delivery: delivered, or not (then it is sent again,
  // once). not_found for no such delivery; conflict when it is not in_doubt.
  Result<Delivery> resolve(const std::string& endpoint, std::int64_t event_id, bool delivered,
                           OutboxDeadline deadline);
  // Makes dead deliveries pending again with a fresh budget of attempts. All or nothing:
  // not_found when one is missing, conflict when one is not dead.
  Result<std::vector<std::int64_t>> redeliver(const std::string& endpoint,
                                              std::span<const std::int64_t> event_ids,
                                              OutboxDeadline deadline);

  // The delivery worker's steps, each its own transaction.
  // Makes every endpoint's deliveries for the events past its position (up to `per_endpoint`
  // each); returns how many feed events the endpoints went past.
  Result<int> dispatch(int per_endpoint, OutboxDeadline deadline);
  Result<std::vector<DeliveryClaim>> claim(const std::string& owner, int limit,
                                           std::chrono::milliseconds lease,
                                           OutboxDeadline deadline);
  // Records the outcomes whose fence still holds; says, per outcome, whether it was recorded.
  Result<std::vector<bool>> settle(std::span<const DeliveryOutcome> outcomes,
                                   OutboxDeadline deadline);
  struct Reaped {
    int pending = 0, dead = 0, in_doubt = 0;
  };
  Result<Reaped> reap(OutboxDeadline deadline);
  // Per endpoint, its undelivered deliveries by status and its lag.
  Result<std::vector<std::pair<std::string, DeliveryCounts>>> counts(OutboxDeadline deadline);
  // The age in seconds of the oldest committed event the feed still holds back (a transaction
  // older than it is still running, docs/EVENTS.md); 0 when none.
  Result<double> held_seconds(OutboxDeadline deadline);

 private:
  store::EventsStore events() const;

  store::Database& db_;
};

// One HTTP POST of a delivery, as the sender makes it.
struct SendRequest {
  std::string url;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};
struct SendReport {
  SendResult result = SendResult::refused;
  std::optional<int> http_status;
  std::string error;  // empty when delivered
};

// Makes HTTP(S) POSTs (http/webhook_sender.cpp; tests use their own). send() sends every
// request concurrently and returns a report per request, in order, once all are done or past
// `timeout` each. It never throws. A report says `refused` only when the request surely was
// not received (no connection, or an answer that was not 2xx), `unknown` whenever it may
// have been.
class Sender {
 public:
  virtual ~Sender() = default;
  virtual std::vector<SendReport> send(std::span<const SendRequest> requests,
                                       std::chrono::milliseconds timeout) = 0;
};

// The headers of a delivery (docs/EVENTS.md, "A delivery"): Content-Type, Idempotency-Key
// (the event id), OnceOrder-Signature (t=<unix seconds>,v1=<hex HMAC-SHA256>), and the event's
// type, id and attempt for logs.
SendRequest delivery_request(const DeliveryClaim& claim, std::int64_t unix_seconds);

struct DeliveryWorkerOptions {
  std::string owner;  // fencing identity (process identity plus a worker number)
  int batch = 32;     // deliveries claimed at once
  std::chrono::milliseconds lease{30000};
  std::chrono::milliseconds send_timeout{10000};
  std::chrono::milliseconds idle_poll{100};  // how often an idle worker looks for work
  int dispatch_per_endpoint = 500;
  // How often an idle worker runs what writes without finding work (the reaper, a claim that
  // finds nothing): on SQLite each takes the database's one write lock. A retry or an operator's
  // redeliver waits at most this long for a claim.
  std::chrono::milliseconds sweep_interval{1000};
};

// What a worker has done since it started (for /metrics).
struct DeliveryMetrics {
  std::atomic<std::uint64_t> delivered{0};
  std::atomic<std::uint64_t> retried{0};  // refused or unknown, to be sent again
  std::atomic<std::uint64_t> dead{0};
  std::atomic<std::uint64_t> in_doubt{0};
  std::atomic<std::uint64_t> fenced_out{0};    // outcomes not recorded: the lease had ended
  std::atomic<std::uint64_t> skipped_late{0};  // claims left unsent: too little lease left
  std::atomic<std::uint64_t> reaped{0};
  std::atomic<std::uint64_t> errors{0};  // a step that failed (the database)
  // Seconds from an event to its delivery, as a histogram's buckets (cumulative at read).
  static constexpr std::array<double, 10> kLagBuckets = {0.01, 0.025, 0.05, 0.1, 0.25,
                                                         0.5,  1,     2.5,  10,  60};
  std::array<std::atomic<std::uint64_t>, 11> lag_buckets{};  // the last one is +Inf
  std::atomic<std::uint64_t> lag_count{0};
  std::atomic<std::uint64_t> lag_sum_us{0};
  void observe_lag(double seconds);
};

class DeliveryWorker {
 public:
  DeliveryWorker(store::Database& db, Sender& sender, DeliveryWorkerOptions options,
                 DeliveryMetrics& metrics);
  ~DeliveryWorker();  // stops
  void start();
  void stop();
  // Looks for work now instead of at the next poll (a commit that wrote events, a test).
  void wake();
  // One pass: reap, dispatch, claim, send, settle. Returns how many deliveries it settled.
  // What the thread runs; tests call it directly.
  Result<int> run_once();

 private:
  void loop();
  Status reap_now(OutboxDeadline deadline);
  std::vector<SendReport> send(const std::vector<DeliveryClaim>& claims,
                               store::Clock::time_point lease_end);
  Result<int> send_and_settle(std::vector<DeliveryClaim> claims,
                              store::Clock::time_point lease_end);
  void count_outcome(const DeliveryOutcome& outcome, const Event& event);

  store::Database& db_;
  Sender& sender_;
  DeliveryWorkerOptions options_;
  DeliveryMetrics& metrics_;
  Outbox outbox_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;   // guarded by mu_
  bool woken_ = false;  // guarded by mu_
  // The worker's thread only (run_once).
  store::Clock::time_point last_sweep_{};
  bool busy_ = false;  // the last claim found work
  std::thread thread_;
};

}  // namespace onceorder
