// The HTTP front end (Boost.Beast): API.md's routes over the services, problem+json
// errors, bearer-token auth, /healthz /readyz /metrics, the operator dashboard and the
// OpenAPI document (both built into the binary).
//
// I/O runs on its own thread; request handlers run on a bounded worker pool sized to the
// database pool, each under a per-request deadline. What needs no database — health,
// readiness and metrics (from a cache the server refreshes in the background on connections
// of its own), the embedded files, and refusals of requests without a valid token — is
// answered on the I/O thread, so unauthenticated clients never take a worker or a pooled
// connection. A request's header is judged before its body is read (http/edge.hpp: Host,
// Origin, Content-Type, framing; then route, method and token). Bodies over 1 MiB are refused; a
// request's header must arrive within `header_timeout`; idle keep-alive connections are closed. At
// most `max_connections` connections are held (within the open-file limit, which start() raises to
// the hard limit); at the cap the longest-idle, else the slowest-sending, connection is closed to
// serve a new one. stop() finishes requests being handled and closes the rest at once.
// Manual schedule runs in progress (also `?wait=false` ones, on threads of their own) are
// ended cleanly by stop(): set to `error` so that their orders are candidates again at once.
// Thread-safety: start/stop/wait from one controlling thread; port() from any.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onceorder/core/limits.hpp"
#include "onceorder/core/status.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

class Scheduler;
class Intake;
struct DeliveryMetrics;

// Request workers per database connection, by default. More workers than connections: a
// request waiting in a combining lane (numbers, orders) holds a worker but no connection,
// and only requests that reach a lane can be combined: with one worker per connection, the
// lanes would rarely hold more than one request to combine.
inline constexpr int kWorkersPerConnection = 4;

// Bad tokens (401 answers) one client address may send within kAuthFailureWindow; past them,
// its requests to routes that need a token are answered 429 until the window has passed.
inline constexpr int kAuthFailureLimit = 10;
inline constexpr std::chrono::seconds kAuthFailureWindow{60};

struct ServerOptions {
  std::string listen = "127.0.0.1:8080";  // host:port; port 0 picks a free one
  // The tokens file (`onceorder serve` finds or creates one when --tokens is not given).
  // Required: start() refuses to serve without it.
  std::optional<std::string> tokens_file;
  // Bad tokens one address may send within the window before it is refused (429).
  int auth_failure_limit = kAuthFailureLimit;
  std::chrono::seconds auth_failure_window = kAuthFailureWindow;
  // Host names clients may call this server by, besides localhost, 127.0.0.1, [::1] and the
  // listen address (any port); another Host is answered 421 (docs/API.md, "The HTTP edge").
  std::vector<std::string> allowed_hosts;
  // Origins (http[s]://host[:port]) that may send state-changing requests, besides those of
  // the allowed hosts; another Origin is answered 403.
  std::vector<std::string> allowed_origins;
  // Request workers; 0: kWorkersPerConnection per database connection.
  int workers = 0;
  std::chrono::milliseconds request_deadline{5000};
  std::chrono::seconds idle_timeout{30};    // keep-alive wait for a request; a body's total
  std::chrono::seconds header_timeout{10};  // a request's whole header, from its first byte
  // Most client connections held at once; fewer when the open-file limit is lower.
  int max_connections = 1024;
  // Time between the background invariant runs /metrics reports (0: none).
  std::chrono::milliseconds invariants_interval{30000};
  std::size_t body_limit = kDefaultBodyLimit;
  // What this process's delivery workers have done, for /metrics (null: nothing to show).
  // Owned by the caller; outlives the server.
  DeliveryMetrics* delivery_metrics = nullptr;
  // HTTPS: a PEM certificate chain and its key (both or neither), read again on SIGHUP.
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  // A proxy in front terminates TLS: plain HTTP may be served on a non-loopback address.
  bool behind_tls_proxy = false;
  // Requests a second each principal may make, and its burst (docs/SECURITY.md); 0: no limit.
  // A burst of 0 means one second's worth.
  double rate_limit = 0;
  double rate_burst = 0;
  // Serve /metrics on this address instead ("PORT" alone: 127.0.0.1:PORT); the main listener
  // then answers /metrics 404. None: /metrics on the main listener.
  std::optional<std::string> metrics_listen;
};

class Server {
 public:
  // Binds and starts serving. Fails (nothing started) on a bad address, a tokens file that is
  // missing, unreadable, open to group or others, or malformed, an unreadable TLS certificate
  // or key, or plain HTTP on a non-loopback address without behind_tls_proxy. The process's
  // one Scheduler and Intake (and `db`) must outlive the server.
  static Result<std::unique_ptr<Server>> start(store::Database& db, Scheduler& scheduler,
                                               Intake& intake, ServerOptions options);
  virtual ~Server() = default;

  virtual std::uint16_t port() const = 0;
  // Stops accepting, lets requests being handled finish, closes idle connections and those
  // still sending a request at once, and the rest (slow readers) after a short grace.
  virtual void stop() = 0;
  // Blocks until the server has stopped (after stop(), or SIGTERM/SIGINT when
  // `handle_signals` was called).
  virtual void wait() = 0;
  // Stop gracefully on SIGTERM / SIGINT; read the TLS certificate and key again on SIGHUP
  // (connections accepted afterwards use them; a failed reload keeps the old ones).
  virtual void handle_signals() = 0;
};

}  // namespace onceorder
