#include "http/metrics_listener.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "http/listen_address.hpp"
#include "http/problem.hpp"

namespace onceorder::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;

// The only path, and the most a request to it may weigh (a scrape has no body).
constexpr std::string_view kMetricsPath = "/metrics";
constexpr std::uint32_t kMetricsRequestLimit = 8 * 1024;

Response metrics_listener_answer(const Request& req, const std::function<Response()>& render) {
  if (sv(req.target()) != kMetricsPath) {
    return problem_response(Status(Code::not_found, "this listener serves /metrics only"));
  }
  if (req.method() != bhttp::verb::get && req.method() != bhttp::verb::head) {
    Response res = problem_response(Status(
        Code::method_not_allowed, std::string(req.method_string()) + " is not allowed here"));
    res.set(bhttp::field::allow, "GET, HEAD");
    return res;
  }
  Response res = render();
  if (req.method() == bhttp::verb::head) {
    res.prepare_payload();
    const std::string length(res[bhttp::field::content_length]);
    res.body().clear();
    res.set(bhttp::field::content_length, length);
  }
  return res;
}

}  // namespace

std::string metrics_listen_address(std::string_view value) {
  if (!value.empty() && value.find_first_not_of("0123456789") == std::string_view::npos) {
    return fmt::format("127.0.0.1:{}", value);
  }
  return std::string(value);
}

MetricsListener::MetricsListener(std::function<Response()> render) : render_(std::move(render)) {}

MetricsListener::~MetricsListener() { stop(); }

Status MetricsListener::start(std::string_view address) {
  const std::string listen = metrics_listen_address(address);
  OO_ASSIGN_OR_RETURN(auto host_port, parse_listen(listen));
  OO_ASSIGN_OR_RETURN(auto endpoint, resolve_listen(host_port));
  beast::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status(Code::unavailable,
                  fmt::format("cannot listen on {} for metrics: {}", listen, ec.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  if (!is_loopback(endpoint.address())) {
    spdlog::warn(
        "/metrics is served on {} (not loopback): anyone who reaches it reads the "
        "business counters",
        endpoint.address().to_string());
  }
  asio::co_spawn(io_, accept_loop(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
  spdlog::info("serving /metrics on {} port {}", endpoint.address().to_string(), port_);
  return Status::Ok();
}

void MetricsListener::stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] {
    beast::error_code ec;
    acceptor_.close(ec);
    io_.stop();
  });
  thread_.join();
}

asio::awaitable<void> MetricsListener::accept_loop() {
  for (;;) {
    beast::error_code ec;
    tcp::socket socket =
        co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (ec) continue;
    if (open_ >= kMaxConnections) {
      socket.close(ec);  // a scraper retries at its next interval
      continue;
    }
    ++open_;
    asio::co_spawn(io_, serve(std::move(socket)), [this](const std::exception_ptr&) { --open_; });
  }
}

asio::awaitable<void> MetricsListener::serve(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(kRequestTime);
  beast::flat_buffer buffer;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(kMetricsRequestLimit);
  parser.body_limit(kMetricsRequestLimit);
  beast::error_code ec;
  co_await bhttp::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
  Response res = ec ? problem_response(Status(Code::invalid_request, "malformed HTTP request"))
                    : metrics_listener_answer(parser.get(), render_);
  res.version(11);
  add_common_headers(res);
  res.keep_alive(false);
  if (res.find(bhttp::field::content_length) == res.end()) res.prepare_payload();
  co_await bhttp::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream.close();
}

}  // namespace onceorder::http
