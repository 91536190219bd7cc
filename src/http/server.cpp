#include "onceorder/http/http_server.hpp"

#include <utility>  // before any Asio header (Boost 1.74 awaitable.hpp misses it)

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <csignal>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "http/api.hpp"
#include "http/auth_throttle.hpp"
#include "http/edge.hpp"
#include "http/fd_limit.hpp"
#include "http/listen_address.hpp"
#include "http/problem.hpp"
#include "http/session_entry.hpp"
#include "http/tls.hpp"
#include "onceorder/service/outbox.hpp"

namespace onceorder {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using asio::ip::tcp;
using http::Request;
using http::Response;
using http::SessionEntry;

constexpr auto kUseAwaitable = asio::use_awaitable;
// Requests that may wait for a worker, per worker, before new ones are turned away.
constexpr int kQueuePerWorker = 4;
// How long, and how much, to read away after refusing an unread body.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr std::size_t kLingerBytes = 16 * 1024 * 1024;
// After stop(): how long a response may take to be written, and how long sessions get
// before every connection still open is cut (requests still being handled finish first).
constexpr auto kStopWriteTime = std::chrono::seconds(2);
constexpr auto kStopGrace = std::chrono::seconds(2);
// How long /readyz waits for a stale readiness answer to be checked again.
constexpr auto kReadinessWait = std::chrono::seconds(1);
constexpr auto kReadinessPoll = std::chrono::milliseconds(5);
// Descriptors kept free below the open-file limit for everything but client connections:
// a fixed share plus a few per database connection (SQLite opens three files each).
constexpr int kReservedDescriptors = 64;
constexpr int kReservedPerDbConnection = 4;
// How often the feed's head is read while long polls wait: one query per interval, however
// many wait, and the most an event waits beyond its commit to be answered.
constexpr auto kFeedWatchInterval = std::chrono::milliseconds(100);
// How soon a woken long poll that found no worker free asks again.
constexpr auto kLongPollRetry = std::chrono::milliseconds(10);

// Which listener a connection came in on: the main one serves every route (but /metrics when
// a metrics listener is set), the metrics one serves /metrics only.
enum class Listener { main, metrics };

template <class Stream>
constexpr bool kIsTlsStream = !std::is_same_v<Stream, beast::tcp_stream>;

// Completion of a detached coroutine: exceptions are logged, never lost silently.
auto log_failure(std::string_view what) {
  return [what](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      spdlog::error("http {} failed: {}", what, ex.what());
    }
  };
}

class ServerImpl final : public Server {
 public:
  ServerImpl(store::Database& db, Scheduler& scheduler, Intake& intake, ServerOptions options,
             std::optional<http::TokenTable> tokens, http::EdgePolicy edge, int workers,
             int max_connections, std::shared_ptr<ssl::context> tls)
      : options_(std::move(options)),
        edge_(std::move(edge)),
        db_(db),
        workers_count_(workers),
        max_connections_(max_connections),
        api_(db, scheduler, intake, std::move(tokens), options_.invariants_interval,
             options_.delivery_metrics),
        throttle_(options_.auth_failure_limit, options_.auth_failure_window),
        workers_(static_cast<std::size_t>(workers)),
        acceptor_(io_),
        metrics_acceptor_(io_),
        tls_(std::move(tls)) {
    api_.metrics().max_connections().store(max_connections);
    api_.set_rate_limit({options_.rate_limit, options_.rate_burst});
  }

  ~ServerImpl() override {
    stop();
    wait();
  }

  // Binds the main listener and, when `metrics` is given, the /metrics one.
  Status listen(const tcp::endpoint& endpoint, const std::optional<tcp::endpoint>& metrics) {
    OO_RETURN_IF_ERROR(bind(acceptor_, endpoint, options_.listen));
    port_ = acceptor_.local_endpoint().port();
    if (metrics) {
      OO_RETURN_IF_ERROR(
          bind(metrics_acceptor_, *metrics, *options_.metrics_listen + " (for metrics)"));
      metrics_port_ = metrics_acceptor_.local_endpoint().port();
    }
    return Status::Ok();
  }

  static Status bind(tcp::acceptor& acceptor, const tcp::endpoint& endpoint,
                     const std::string& name) {
    beast::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return Status(Code::unavailable, fmt::format("cannot listen on {}: {}", name, ec.message()));
    return Status::Ok();
  }

  void run() {
    asio::co_spawn(io_, accept_loop(acceptor_, Listener::main), log_failure("acceptor"));
    if (metrics_acceptor_.is_open()) {
      asio::co_spawn(io_, accept_loop(metrics_acceptor_, Listener::metrics),
                     log_failure("metrics acceptor"));
    }
    io_thread_ = std::thread([this] { io_.run(); });
  }

  std::uint16_t metrics_port() const { return metrics_port_; }

  std::uint16_t port() const override { return port_; }

  void stop() override {
    api_.runs().stop();  // at once: a request running a run must not hold up stopping
    api_.monitor().request_stop();
    asio::post(io_, [this] { begin_stop(); });
  }

  void wait() override {
    std::lock_guard lock(wait_mu_);
    if (io_thread_.joinable()) io_thread_.join();
    workers_.join();
    api_.runs().join();
    api_.monitor().join();
  }

  void handle_signals() override {
    std::lock_guard lock(signals_mu_);
    if (signals_) return;
    signals_.emplace(io_, SIGINT, SIGTERM);
    signals_->async_wait([this](const beast::error_code& ec, int signal) {
      if (ec) return;
      spdlog::info("received signal {}: stopping", signal);
      begin_stop();
    });
    reload_signal_.emplace(io_, SIGHUP);
    await_reload();
  }

 private:
  // Waits for SIGHUP (again after each), then reads the TLS certificate and key anew. Called
  // with signals_mu_ held.
  void await_reload() {
    reload_signal_->async_wait([this](const beast::error_code& ec, int) {
      if (ec) return;
      reload_tls();
      std::lock_guard lock(signals_mu_);
      if (!stopping_) await_reload();
    });
  }

  // On the I/O thread, so that tls_ needs no lock: connections accepted from now on use the
  // new context, those already open keep theirs (each holds its own reference).
  void reload_tls() {
    if (!tls_) {
      spdlog::info("received SIGHUP: no TLS certificate to read again");
      return;
    }
    auto fresh = http::make_tls_context(*options_.tls_cert, *options_.tls_key);
    if (!fresh.ok()) {
      spdlog::error("TLS reload failed, still serving the previous certificate: {}",
                    fresh.status().message());
      return;
    }
    tls_ = std::move(*fresh);
    spdlog::info("TLS certificate {} and key {} read again", *options_.tls_cert, *options_.tls_key);
  }

  // Runs on the I/O thread.
  void begin_stop() {
    if (stopping_) return;
    stopping_ = true;
    api_.runs().stop();  // also when the stop came from a signal
    api_.monitor().request_stop();
    beast::error_code ec;
    acceptor_.close(ec);
    metrics_acceptor_.close(ec);
    {
      std::lock_guard lock(signals_mu_);
      if (signals_) signals_->cancel(ec);
      if (reload_signal_) reload_signal_->cancel(ec);
    }
    // A client still sending its request (however slowly) has nothing in flight: close it
    // now, like idle ones. Requests being handled finish and are answered.
    int busy = 0;
    for (SessionEntry* s : sessions_) {
      if (s->sheddable())
        s->close_now();
      else
        ++busy;
    }
    // Long polls answer their empty page now.
    for (FeedWaiter* w : feed_waiters_) w->timer->cancel();
    spdlog::info("http server stopping: {} request(s) in flight will finish", busy);
    if (sessions_.empty()) return;
    // Then cut what is left (a client reading its answer slowly) after a short grace.
    stop_timer_.expires_after(kStopGrace);
    stop_timer_.async_wait([this](const beast::error_code& e) {
      if (e) return;  // cancelled: every session ended in time
      for (SessionEntry* s : sessions_) {
        if (s->state != SessionEntry::State::handling) s->close_now();
      }
    });
  }

  // At the cap: closes the connection that has waited longest for a request, else the one
  // that has taken longest to send its request. False when every connection is busy.
  bool shed_one() {
    auto rank = [](const SessionEntry& s) { return s.state == SessionEntry::State::idle ? 0 : 1; };
    SessionEntry* victim = nullptr;
    for (SessionEntry* s : sessions_) {
      if (!s->sheddable()) continue;
      if (!victim || rank(*s) < rank(*victim) ||
          (rank(*s) == rank(*victim) && s->since < victim->since)) {
        victim = s;
      }
    }
    if (!victim) return false;
    victim->close_now();
    sessions_.erase(victim);  // no longer counted; its coroutine ends on its next step
    return true;
  }

  void unregister(SessionEntry* entry) {
    sessions_.erase(entry);
    api_.metrics().connections().fetch_sub(1);
    if (stopping_ && sessions_.empty()) stop_timer_.cancel();
  }

  asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, Listener where) {
    for (;;) {
      beast::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(kUseAwaitable, ec));
      if (stopping_) co_return;
      if (ec) {
        // Out of descriptors or similar: pause instead of spinning on the error.
        spdlog::warn("http accept failed: {}", ec.message());
        asio::steady_timer pause(io_, std::chrono::milliseconds(100));
        co_await pause.async_wait(asio::redirect_error(kUseAwaitable, ec));
        continue;
      }
      if (static_cast<int>(sessions_.size()) >= max_connections_ && !shed_one()) {
        // Every connection is busy with a request: this one cannot be served now.
        api_.metrics().connections_shed().fetch_add(1);
        socket.close(ec);
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);
      if (where == Listener::main && tls_) {
        asio::co_spawn(io_, tls_session(std::move(socket), tls_), log_failure("session"));
      } else {
        asio::co_spawn(io_, plain_session(std::move(socket), where), log_failure("session"));
      }
    }
  }

  asio::awaitable<void> plain_session(tcp::socket socket, Listener where) {
    beast::tcp_stream stream(std::move(socket));
    co_await session(stream, where);
  }

  // `tls` is the context at accept time, held for the connection's life (a reload may
  // replace the server's).
  asio::awaitable<void> tls_session(tcp::socket socket, std::shared_ptr<ssl::context> tls) {
    beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *tls);
    co_await session(stream, Listener::main);
  }

  template <class Stream>
  asio::awaitable<void> session(Stream& stream, Listener where) {
    beast::tcp_stream& tcp_layer = beast::get_lowest_layer(stream);
    SessionEntry entry{&tcp_layer};
    sessions_.insert(&entry);
    api_.metrics().connections().fetch_add(1);
    struct Unregister {
      ServerImpl& server;
      SessionEntry* entry;
      ~Unregister() { server.unregister(entry); }
    } unregister{*this, &entry};

    if constexpr (kIsTlsStream<Stream>) {
      // Within the header timeout, like a request's header: a client that connects and
      // says nothing holds a connection no longer than one that sends half a request.
      entry.enter(SessionEntry::State::receiving);
      tcp_layer.expires_after(options_.header_timeout);
      beast::error_code ec;
      co_await stream.async_handshake(ssl::stream_base::server,
                                      asio::redirect_error(kUseAwaitable, ec));
      tcp_layer.expires_never();
      if (ec) {
        spdlog::debug("TLS handshake failed: {}", ec.message());
        tcp_layer.socket().close(ec);
        co_return;
      }
    }
    const bool linger = co_await serve_requests(stream, entry, where);
    entry.enter(SessionEntry::State::idle);  // sheddable while it drains and closes
    beast::error_code ec;
    // Under TLS no close_notify is awaited: every answer is framed, so none is needed.
    if constexpr (!kIsTlsStream<Stream>)
      tcp_layer.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (linger) co_await drain(stream);
    tcp_layer.socket().close(ec);
  }

  // Reads and answers requests until the connection ends; true when the rest of a request
  // was left unread (the caller drains it before closing).
  template <class Stream>
  asio::awaitable<bool> serve_requests(Stream& stream, SessionEntry& entry, Listener where) {
    beast::tcp_stream& tcp_layer = beast::get_lowest_layer(stream);
    beast::error_code peer_ec;
    const std::string peer = tcp_layer.socket().remote_endpoint(peer_ec).address().to_string();
    beast::flat_buffer buffer;
    bool linger = false;
    while (!stopping_ && !linger) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(options_.body_limit);
      beast::error_code ec = co_await read_header(stream, buffer, parser, entry);
      auto arrival = store::Clock::now();
      tcp_layer.expires_never();

      Response res;
      http::RequestLabels labels;
      // Unknown methods share one label: a client must not be able to mint series.
      const std::string_view method = parser.get().method() == bhttp::verb::unknown
                                          ? "OTHER"
                                          : http::sv(bhttp::to_string(parser.get().method()));
      // HEAD is answered as GET is, without the body (RFC 9110 9.3.2).
      const bool head = !ec && parser.get().method() == bhttp::verb::head;
      if (head) parser.get().method(bhttp::verb::get);
      std::optional<Response> refusal;
      if (!ec) {
        refusal = refuse_header(parser.get(), !parser.is_done(), labels, linger, where, peer);
        if (!refusal) {
          ec = co_await read_body(stream, buffer, parser);
          arrival = store::Clock::now();  // the deadline is the handler's, not the upload's
        }
      }
      if (ec) {
        refusal = refuse_unreadable(ec, parser, labels.route);
        if (!refusal) break;  // closed, idle timeout, reset or stopped: nobody to answer
        linger = true;        // the rest of the request was never read: close after answering
      }
      if (refusal) {
        res = std::move(*refusal);
      } else {
        entry.enter(SessionEntry::State::handling);
        Request req = parser.release();
        res = co_await answer(req, arrival, labels);
        res.keep_alive(req.keep_alive());
      }
      if (head) res.body().clear();  // its Content-Length stays the GET's
      entry.enter(SessionEntry::State::answering);
      res.version(11);
      http::add_common_headers(res);
      if (linger || stopping_) res.keep_alive(false);

      record_answer(labels, method, res, arrival);

      tcp_layer.expires_after(stopping_ ? kStopWriteTime : options_.idle_timeout);
      co_await bhttp::async_write(stream, res, asio::redirect_error(kUseAwaitable, ec));
      if (ec || !res.keep_alive()) break;
    }
    co_return linger;
  }

  // The answer's metrics and access-log line.
  void record_answer(const http::RequestLabels& labels, std::string_view method,
                     const Response& res, store::Clock::time_point arrival) {
    const double seconds = std::chrono::duration<double>(store::Clock::now() - arrival).count();
    api_.metrics().record(labels.route, method, res.result_int(), seconds);
    // Only `busy` carries Retry-After (problem_response): told apart from `unavailable`.
    if (res.result() == bhttp::status::service_unavailable &&
        res.find(bhttp::field::retry_after) != res.end()) {
      api_.metrics().count_busy();
    }
    // The principal's name, never the token: views, so the line costs no allocation more.
    spdlog::info("http method={} route={} principal={} status={} duration_ms={:.2f}", method,
                 labels.route, labels.principal, res.result_int(), seconds * 1000);
  }

  // Reads one request's header: waits up to the idle timeout for its first byte, then gives
  // the whole header `header_timeout` (a total, not per byte: trickling does not extend it).
  template <class Stream>
  asio::awaitable<beast::error_code> read_header(Stream& stream, beast::flat_buffer& buffer,
                                                 bhttp::request_parser<bhttp::string_body>& parser,
                                                 SessionEntry& entry) const {
    beast::error_code ec;
    entry.enter(SessionEntry::State::idle);
    if (buffer.size() == 0) {
      beast::get_lowest_layer(stream).expires_after(options_.idle_timeout);
      const std::size_t n = co_await stream.async_read_some(
          buffer.prepare(4096), asio::redirect_error(kUseAwaitable, ec));
      buffer.commit(n);
      if (ec) co_return ec;
    }
    entry.enter(SessionEntry::State::receiving);
    beast::get_lowest_layer(stream).expires_after(options_.header_timeout);
    co_await bhttp::async_read_header(stream, buffer, parser,
                                      asio::redirect_error(kUseAwaitable, ec));
    co_return ec;
  }

  // The refusal of a request on its header alone, before any of its body is read: the edge's
  // rules (Host, framing, Origin, Content-Type; these close the connection), then the route,
  // method and token (these close it only when a body was on its way). nullopt admits it.
  // The metrics listener knows /metrics only, and the main one then knows it no more.
  std::optional<Response> refuse_header(http::Request& header, bool body_pending,
                                        http::RequestLabels& labels, bool& close, Listener where,
                                        const std::string& peer) {
    if (auto refusal = edge_.check(header)) {
      labels.route = http::Api::route_label(http::sv(header.target()));
      close = true;
      return refusal;
    }
    const bool metrics = http::Api::is_metrics_route(http::sv(header.target()));
    if (metrics != (where == Listener::metrics) &&
        (where == Listener::metrics || options_.metrics_listen)) {
      close = body_pending;
      return http::problem_response(Status(Code::not_found, "no such resource on this listener"));
    }
    auto refusal = refuse_throttled(header, labels, peer);
    if (!refusal) refusal = api_.refuse_header(header, labels);
    if (refusal && refusal->result() == bhttp::status::unauthorized) {
      count_bad_token(header, peer);
    }
    if (refusal && body_pending) close = true;
    return refusal;
  }

  // 429 when `peer` sent too many bad tokens lately (AuthThrottle) and the request needs a
  // token, whatever it carries.
  std::optional<Response> refuse_throttled(const http::Request& header, http::RequestLabels& labels,
                                           const std::string& peer) {
    if (!http::Api::needs_token(header)) return std::nullopt;
    const auto wait = throttle_.refused(peer, http::AuthThrottle::Clock::now());
    if (!wait) return std::nullopt;
    labels.route = http::Api::route_label(http::sv(header.target()));
    api_.metrics().auth_refusals().fetch_add(1);
    Response res = http::problem_response(
        Status(Code::too_many_requests,
               fmt::format("too many requests with a missing or unknown token from this address; "
                           "retry in {} s",
                           wait->count())));
    res.set(bhttp::field::retry_after, std::to_string(wait->count()));
    return res;
  }

  // A 401: counted, and the token it carried counted against `peer` (one without any is no
  // guess).
  void count_bad_token(const http::Request& header, const std::string& peer) {
    api_.metrics().auth_failures().fetch_add(1);
    const auto authorization = header.find(bhttp::field::authorization);
    if (authorization == header.end()) return;
    const std::size_t token_hash = std::hash<std::string_view>{}(http::sv(authorization->value()));
    if (throttle_.record_failure(peer, token_hash, http::AuthThrottle::Clock::now())) {
      spdlog::warn("msg=\"refusing an address after bad tokens\" address={} failures={} seconds={}",
                   peer, options_.auth_failure_limit, options_.auth_failure_window.count());
    }
  }

  // Reads the body of an admitted request, within the idle timeout. Answers
  // `Expect: 100-continue` (only now, once the request is admitted) so that such clients
  // send their body.
  template <class Stream>
  asio::awaitable<beast::error_code> read_body(
      Stream& stream, beast::flat_buffer& buffer,
      bhttp::request_parser<bhttp::string_body>& parser) const {
    beast::error_code ec;
    beast::get_lowest_layer(stream).expires_after(options_.idle_timeout);
    if (beast::iequals(parser.get()[bhttp::field::expect], "100-continue")) {
      bhttp::response<bhttp::empty_body> go_on{bhttp::status::continue_, 11};
      co_await bhttp::async_write(stream, go_on, asio::redirect_error(kUseAwaitable, ec));
      if (ec) co_return ec;
    }
    if (!parser.is_done()) {
      co_await bhttp::async_read(stream, buffer, parser, asio::redirect_error(kUseAwaitable, ec));
    }
    beast::get_lowest_layer(stream).expires_never();
    co_return ec;
  }

  // The answer to a request that could not be read: 413 past the body limit, 400 when it
  // is not HTTP; nullopt when the peer is gone and nothing should be sent.
  std::optional<Response> refuse_unreadable(const beast::error_code& ec,
                                            const bhttp::request_parser<bhttp::string_body>& parser,
                                            std::string_view& route) const {
    if (ec == bhttp::error::body_limit) {
      route = http::Api::route_label(http::sv(parser.get().target()));
      return http::problem_response(
          Status(Code::payload_too_large,
                 fmt::format("the body is larger than {} bytes", options_.body_limit)));
    }
    const bool parse_error =
        ec.category() == bhttp::make_error_code(bhttp::error::end_of_stream).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
    if (!parse_error) return std::nullopt;
    return http::problem_response(
        Status(Code::invalid_request, "malformed HTTP request: " + ec.message()));
  }

  // Gives the monitor a moment to check a stale readiness answer again (one check however
  // many probes wait), without holding the I/O thread.
  asio::awaitable<void> await_fresh_readiness() {
    const auto until = store::Clock::now() + kReadinessWait;
    asio::steady_timer pause(io_);
    while (!api_.monitor().readiness_fresh() && store::Clock::now() < until) {
      beast::error_code ec;
      pause.expires_after(kReadinessPoll);
      co_await pause.async_wait(asio::redirect_error(kUseAwaitable, ec));
    }
  }

  // After refusing a request whose body was not read, keep reading (and discarding) for a
  // moment: closing with unread data would reset the connection and the client might
  // never see the answer.
  template <class Stream>
  static asio::awaitable<void> drain(Stream& stream) {
    std::array<char, 16 * 1024> sink;
    std::size_t drained = 0;
    beast::error_code ec;
    beast::get_lowest_layer(stream).expires_after(kLingerTime);
    while (drained < kLingerBytes && !ec) {
      drained += co_await stream.async_read_some(asio::buffer(sink),
                                                 asio::redirect_error(kUseAwaitable, ec));
    }
  }

  // Runs the request on a worker, unless too many already wait for one. What needs no
  // database (health, readiness and metrics from the cache, dashboard files, refusals of
  // requests without a valid token) is answered here: a saturated pool must not make the
  // process look dead, and a client without a token must not take a worker. A long poll whose
  // page was empty then waits here (long_poll), holding neither a worker nor a connection.
  asio::awaitable<Response> answer(const Request& req, store::Clock::time_point arrival,
                                   http::RequestLabels& labels) {
    const auto deadline = arrival + options_.request_deadline;
    if (api_.answers_inline(req)) {
      if (http::Api::is_readiness_probe(req)) co_await await_fresh_readiness();
      co_return api_.handle(req, deadline, labels);
    }
    http::FeedWait wait;
    std::optional<Response> res = co_await on_worker(req, deadline, labels, &wait);
    if (!res) {
      labels.route = http::Api::route_label(http::sv(req.target()));
      co_return http::problem_response(
          Status(Code::busy, "the server has too many requests waiting; retry"));
    }
    if (wait.wait.count() > 0) {
      co_return co_await long_poll(req, arrival + wait.wait, labels, wait, std::move(*res));
    }
    co_return std::move(*res);
  }

  // The handler's answer from a worker; nullopt when too many requests wait for one.
  asio::awaitable<std::optional<Response>> on_worker(const Request& req,
                                                     store::Clock::time_point deadline,
                                                     http::RequestLabels& labels,
                                                     http::FeedWait* wait) {
    auto& in_flight = api_.metrics().in_flight();
    if (in_flight.load() >= workers_count_ * (1 + kQueuePerWorker)) co_return std::nullopt;
    in_flight.fetch_add(1);
    struct Done {
      std::atomic<int>& n;
      ~Done() { n.fetch_sub(1); }
    } done{in_flight};
    co_return co_await asio::co_spawn(
        workers_.get_executor(),
        [&]() -> asio::awaitable<std::optional<Response>> {
          co_return api_.handle(req, deadline, labels, wait);
        },
        kUseAwaitable);
  }

  // A long poll waiting for the feed (GET /v1/events?wait=), registered for the watcher.
  struct FeedWaiter {
    FeedPosition seen;  // woken once the feed's head is past it
    asio::steady_timer* timer = nullptr;
    bool woken = false;
  };

  // Holds a long poll whose page was empty until the feed's head passes what its read saw,
  // then runs the handler again on a worker; answers the last (empty) page at `until`, or at
  // once when the server stops. The wait is an Asio timer on this thread: it takes no worker
  // and no database connection (the watcher reads the head for every waiting request).
  asio::awaitable<Response> long_poll(const Request& req, store::Clock::time_point until,
                                      http::RequestLabels& labels, http::FeedWait wait,
                                      Response last) {
    bool woken = false;
    while (!stopping_ && store::Clock::now() < until) {
      asio::steady_timer timer(io_, until);
      if (woken) {
        // Woken, but no worker was free: ask again in a moment (many waiters woken at once
        // go through the queue's bound, and other requests keep their place in it).
        timer.expires_after(
            std::min<store::Clock::duration>(kLongPollRetry, until - store::Clock::now()));
        beast::error_code ec;
        co_await timer.async_wait(asio::redirect_error(kUseAwaitable, ec));
      } else {
        FeedWaiter waiter{wait.seen, &timer};
        feed_waiters_.insert(&waiter);
        watch_feed();
        beast::error_code ec;
        co_await timer.async_wait(asio::redirect_error(kUseAwaitable, ec));
        feed_waiters_.erase(&waiter);
        if (stopping_ || !waiter.woken) break;
      }
      http::FeedWait again;
      auto res =
          co_await on_worker(req, store::Clock::now() + options_.request_deadline, labels, &again);
      woken = !res;
      if (!res) continue;
      if (again.wait.count() == 0) co_return std::move(*res);  // events, or a problem
      last = std::move(*res);
      wait = again;
    }
    co_return last;
  }

  // Starts the feed watcher unless it runs: while long polls wait, it reads the feed's head
  // every kFeedWatchInterval (one query on a worker, however many wait) and wakes each waiter
  // the head has passed. It ends when nobody waits or the server stops.
  void watch_feed() {
    if (feed_watching_) return;
    feed_watching_ = true;
    asio::co_spawn(io_, feed_watcher(), [this](std::exception_ptr e) {
      if (!e) return;
      feed_watching_ = false;  // the next waiter starts it again
      log_failure("feed watcher")(e);
    });
  }

  asio::awaitable<void> feed_watcher() {
    asio::steady_timer pause(io_);
    while (!stopping_ && !feed_waiters_.empty()) {
      pause.expires_after(kFeedWatchInterval);
      beast::error_code ec;
      co_await pause.async_wait(asio::redirect_error(kUseAwaitable, ec));
      if (stopping_ || feed_waiters_.empty()) break;
      // The waiters answer their empty page at their time if the head cannot be read.
      const std::optional<FeedPosition> head = co_await asio::co_spawn(
          workers_.get_executor(),
          [this]() -> asio::awaitable<std::optional<FeedPosition>> {
            auto read = Outbox(db_).head(store::Clock::now() + options_.request_deadline);
            if (read.ok()) co_return *read;
            spdlog::warn("feed watcher: {}", read.status().to_string());
            co_return std::nullopt;
          },
          kUseAwaitable);
      if (!head) continue;
      for (FeedWaiter* w : feed_waiters_) {
        if (*head > w->seen && !w->woken) {
          w->woken = true;
          w->timer->cancel();
        }
      }
    }
    // Here, before this coroutine ends: a waiter that comes after must start a new watcher.
    feed_watching_ = false;
  }

  const ServerOptions options_;
  const http::EdgePolicy edge_;
  store::Database& db_;
  const int workers_count_;
  const int max_connections_;
  http::Api api_;
  http::AuthThrottle throttle_;
  asio::io_context io_{1};
  asio::thread_pool workers_;
  tcp::acceptor acceptor_;
  tcp::acceptor metrics_acceptor_;  // open when options_.metrics_listen is set
  std::uint16_t port_ = 0;
  std::uint16_t metrics_port_ = 0;
  std::shared_ptr<ssl::context> tls_;  // HTTPS on the main listener; I/O thread after start
  std::thread io_thread_;
  std::mutex wait_mu_;

  std::mutex signals_mu_;
  std::optional<asio::signal_set> signals_;        // guarded by signals_mu_
  std::optional<asio::signal_set> reload_signal_;  // SIGHUP; guarded by signals_mu_

  // I/O thread only.
  bool stopping_ = false;
  std::set<SessionEntry*> sessions_;  // open connections, less those being shed
  asio::steady_timer stop_timer_{io_};
  std::set<FeedWaiter*> feed_waiters_;  // long polls waiting for the feed
  bool feed_watching_ = false;          // the feed watcher runs
};

}  // namespace

Result<std::unique_ptr<Server>> Server::start(store::Database& db, Scheduler& scheduler,
                                              Intake& intake, ServerOptions options) {
  OO_ASSIGN_OR_RETURN(auto host_port, http::parse_listen(options.listen));
  OO_ASSIGN_OR_RETURN(auto endpoint, http::resolve_listen(host_port));
  OO_ASSIGN_OR_RETURN(auto transport, http::prepare_transport(endpoint, options));
  auto allowed_hosts = options.allowed_hosts;
  // A scraper calls the metrics listener by its address.
  if (options.metrics_listen)
    allowed_hosts.push_back(http::parse_listen(*options.metrics_listen)->host);
  OO_ASSIGN_OR_RETURN(
      auto edge, http::EdgePolicy::make(host_port.host, allowed_hosts, options.allowed_origins));
  if (!options.tokens_file) {
    return Status(Code::invalid_request,
                  "a tokens file is required: every request that is "
                  "not to an open route needs a token");
  }
  if (options.auth_failure_limit < 1 || options.auth_failure_window.count() < 1) {
    return Status(Code::invalid_request,
                  "auth_failure_limit and auth_failure_window must be "
                  "at least 1");
  }
  OO_ASSIGN_OR_RETURN(auto tokens, http::TokenTable::load(*options.tokens_file));
  const int workers =
      options.workers > 0 ? options.workers : kWorkersPerConnection * db.options().pool_size;
  const std::size_t token_count = tokens.size();
  if (options.max_connections < 1) {
    return Status(Code::invalid_request, "max_connections must be at least 1");
  }
  // Every connection is a descriptor: take what the hard limit allows, and hold no more
  // connections than leave room for the database (the request pool and the monitor's
  // two) and files, so that accept() never fails for want of a descriptor.
  const std::uint64_t nofile = http::raise_open_file_limit();
  const int reserved =
      kReservedDescriptors + kReservedPerDbConnection * (db.options().pool_size + 2);
  const int max_connections = http::connection_cap(options.max_connections, nofile, reserved);
  if (max_connections < options.max_connections) {
    spdlog::warn("holding at most {} connections (not {}): the open-file limit is {}",
                 max_connections, options.max_connections, nofile);
  }

  auto server =
      std::make_unique<ServerImpl>(db, scheduler, intake, options, std::move(tokens),
                                   std::move(edge), workers, max_connections, transport.tls);
  OO_RETURN_IF_ERROR(server->listen(endpoint, transport.metrics));
  server->run();
  spdlog::info(
      "listening on {} port {} ({}, {} worker(s), {} token(s) from {}, at most {} connections)",
      endpoint.address().to_string(), server->port(), transport.tls ? "HTTPS" : "plain HTTP",
      workers, token_count, *options.tokens_file, max_connections);
  if (transport.metrics) {
    spdlog::info("serving /metrics alone on {} port {} (plain HTTP)",
                 transport.metrics->address().to_string(), server->metrics_port());
  }
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace onceorder
