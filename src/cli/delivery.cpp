#include "cli/delivery.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <ctime>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "http/webhook_sender.hpp"
#include "onceorder/core/process_identity.hpp"
#include "onceorder/core/signature.hpp"

namespace onceorder::cli {
namespace {

using SystemClock = std::chrono::system_clock;

std::int64_t delivery_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             SystemClock::now().time_since_epoch())
      .count();
}

// "YYYY-MM-DDTHH:MM:SS.mmmZ", as OnceOrder writes event times.
std::string utc_text(std::int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, unix_ms % 1000);
}

using EndpointTarget = Outbox::Target;

void set_header(SendRequest& r, std::string_view name, std::string value) {
  for (auto& [k, v] : r.headers) {
    if (k == name) v = std::move(value);
  }
}

// The test event as a delivery makes it: the normal envelope, signed, with `key` as its
// Idempotency-Key (never an event id, so it cannot meet a real event in the receiver's log).
SendRequest test_request(const std::string& name, const EndpointTarget& target,
                         const std::string& key, std::int64_t unix_ms) {
  DeliveryClaim claim;
  claim.endpoint = name;
  claim.url = target.url;
  claim.secret = target.secret;
  claim.attempt = 1;
  claim.event.type = "endpoint.test";
  claim.event.key = key;
  claim.event.occurred_at = utc_text(unix_ms);
  claim.event.data = nlohmann::json{{"endpoint", name}, {"test", true}}.dump();
  SendRequest r = delivery_request(claim, unix_ms / 1000);
  set_header(r, "Idempotency-Key", key);
  return r;
}

std::string outcome_text(const SendReport& r) {
  if (r.http_status) return fmt::format("HTTP {}", *r.http_status);
  return fmt::format("no answer ({}: {})", to_string(r.result), r.error);
}

bool is_2xx(const SendReport& r) { return r.http_status && *r.http_status / 100 == 2; }
bool is_4xx(const SendReport& r) { return r.http_status && *r.http_status / 100 == 4; }

}  // namespace

void add_delivery_options(CLI::App* serve, DeliveryFlags& flags) {
  serve
      ->add_option("--delivery-workers", flags.workers,
                   "threads pushing events to endpoints; 0: none in this process")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  add_duration(serve, "--delivery-lease", flags.lease,
               "how long a claimed delivery stays claimed; at least twice --delivery-timeout "
               "(30s)",
               std::chrono::milliseconds(200), "200ms");
  add_duration(serve, "--delivery-timeout", flags.timeout,
               "time for one delivery, from connecting to the answer's last byte (10s)",
               std::chrono::milliseconds(100), "100ms");
  serve->add_option("--delivery-batch", flags.batch, "deliveries a worker claims at once")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
}

Status check_delivery_flags(const DeliveryFlags& flags) {
  if (flags.lease < 2 * flags.timeout) {
    return Status(Code::invalid_request,
                  fmt::format("--delivery-lease ({} ms) must be at least twice --delivery-timeout "
                              "({} ms): a worker sends only while its lease outlasts the send",
                              flags.lease.count(), flags.timeout.count()));
  }
  return Status::Ok();
}

DeliveryWorkers::DeliveryWorkers(store::Database& db, const DeliveryFlags& flags,
                                 DeliveryMetrics& metrics)
    : sender_(std::make_unique<http::WebhookSender>()) {
  const std::string identity = process_identity();
  for (int i = 0; i < flags.workers; ++i) {
    DeliveryWorkerOptions options;
    options.owner = fmt::format("{}/d{}", identity, i);
    options.batch = flags.batch;
    options.lease = flags.lease;
    options.send_timeout = flags.timeout;
    workers_.push_back(std::make_unique<DeliveryWorker>(db, *sender_, options, metrics));
  }
}

DeliveryWorkers::~DeliveryWorkers() { stop(); }

void DeliveryWorkers::start() {
  for (auto& w : workers_) w->start();
  if (!workers_.empty()) spdlog::info("msg=\"delivering events\" workers={}", workers_.size());
}

void DeliveryWorkers::stop() {
  for (auto& w : workers_) w->stop();
}

CLI::App* add_endpoint_commands(CLI::App& app, EndpointTestFlags& flags) {
  auto* endpoint = app.add_subcommand("endpoint", "push delivery endpoints");
  endpoint->require_subcommand(1);
  auto* test = endpoint->add_subcommand(
      "test",
      "send the endpoint a signed test event twice and a badly signed one; exit 0 when the "
      "signed ones got 2xx and the bad one 4xx");
  test->add_option("NAME", flags.name, "the endpoint's name")->required();
  add_duration(test, "--timeout", flags.timeout, "time for each request (10s)",
               std::chrono::milliseconds(100), "100ms");
  return test;
}

int endpoint_test(store::Database& db, const EndpointTestFlags& flags) {
  auto target =
      Outbox(db).endpoint_target(flags.name, store::Clock::now() + std::chrono::seconds(30));
  if (!target.ok()) return fail(target.status());
  const std::int64_t now_ms = delivery_unix_ms();
  const std::string key = fmt::format("test-{}", now_ms);
  const SendRequest good = test_request(flags.name, *target, key, now_ms);
  // Well-formed and fresh, but made with another secret: only a receiver that checks the
  // signature can tell. Its own key, so that what it gets tests the signature alone.
  SendRequest forged = good;
  set_header(forged, "Idempotency-Key", key + "-forged");
  set_header(forged, kSignatureHeader,
             signature_header(target->secret + "-not-the-secret", now_ms / 1000, good.body));

  http::WebhookSender sender;
  std::cout << fmt::format("endpoint {}: POST {} (type endpoint.test, Idempotency-Key {})\n",
                           flags.name, target->url, key);
  std::vector<SendReport> got;
  const std::pair<const char*, const SendRequest*> sends[] = {
      {"signed", &good}, {"signed again, same key", &good}, {"bad signature", &forged}};
  for (const auto& [what, request] : sends) {
    got.push_back(sender.send({request, 1}, flags.timeout).at(0));
    std::cout << fmt::format("  {:<24} {}\n", what, outcome_text(got.back()));
  }
  std::vector<std::string> problems;
  if (!is_2xx(got[0])) problems.push_back("the signed event was not taken (no 2xx)");
  if (!is_2xx(got[1])) problems.push_back("its repeat with the same key was not taken (no 2xx)");
  if (is_2xx(got[2])) problems.push_back("the badly signed request was accepted");
  if (!is_2xx(got[2]) && !is_4xx(got[2])) {
    problems.push_back("the badly signed request got no 4xx answer");
  }
  if (problems.empty()) {
    std::cout << "ok: the receiver takes signed events, takes a repeat, and refuses a bad "
                 "signature\n";
    return 0;
  }
  std::cout << fmt::format("FAIL: {}\n", fmt::join(problems, "; "));
  return 1;
}

}  // namespace onceorder::cli
