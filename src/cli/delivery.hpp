// Push delivery on the command line (docs/EVENTS.md, "Push delivery"): `serve`'s delivery
// workers and their flags, and `onceorder endpoint test NAME`, which shows an endpoint's
// receiver a signed test event and a badly signed one.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "onceorder/core/status.hpp"
#include "onceorder/service/outbox.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {
namespace http {
class WebhookSender;
}  // namespace http

namespace cli {

struct DeliveryFlags {
  int workers = 1;  // 0: this process delivers nothing
  std::chrono::milliseconds lease{30000};
  std::chrono::milliseconds timeout{10000};
  int batch = 32;
};

// --delivery-workers, --delivery-lease, --delivery-timeout and --delivery-batch on `serve`.
void add_delivery_options(CLI::App* serve, DeliveryFlags& flags);
// invalid_request when the lease is shorter than twice the timeout: a worker never starts a
// send with less lease left than the send may take, so a shorter lease would send nothing.
Status check_delivery_flags(const DeliveryFlags& flags);

// The workers of one `serve` process, sharing one sender; each fences its claims as
// "<process identity>/d<i>".
class DeliveryWorkers {
 public:
  DeliveryWorkers(store::Database& db, const DeliveryFlags& flags, DeliveryMetrics& metrics);
  ~DeliveryWorkers();  // stops
  void start();
  // Waits for each worker's pass in progress (a send takes at most the timeout).
  void stop();

 private:
  std::unique_ptr<http::WebhookSender> sender_;
  std::vector<std::unique_ptr<DeliveryWorker>> workers_;
};

struct EndpointTestFlags {
  std::string name;
  std::chrono::milliseconds timeout{10000};
};
// `endpoint test NAME [--timeout]`; returns the `test` subcommand.
CLI::App* add_endpoint_commands(CLI::App& app, EndpointTestFlags& flags);
// Sends the endpoint a signed test event twice with one Idempotency-Key, then once with a bad
// signature, and prints what each got and a verdict. 0 when both signed sends got a 2xx and
// the badly signed one a 4xx, 1 otherwise, 2 for no such endpoint (or another error).
int endpoint_test(store::Database& db, const EndpointTestFlags& flags);

}  // namespace cli
}  // namespace onceorder
