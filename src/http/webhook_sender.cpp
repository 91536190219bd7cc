#include "http/webhook_sender.hpp"

#include <utility>  // before any Asio header (Boost 1.74 awaitable.hpp misses it)

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <exception>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include "onceorder/core/http_url.hpp"

namespace onceorder::http {

struct WebhookSender::Tls {
  boost::asio::ssl::context context{boost::asio::ssl::context::tls_client};
};

namespace {
// File-local names live in a namespace of their own: the layer compiles in unity batches.
namespace webhook {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Deadline = std::chrono::steady_clock::time_point;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Interim (1xx) answers read before the final one, at most.
constexpr int kMaxInterimAnswers = 4;
constexpr std::uint32_t kAnswerHeaderLimit = 16 * 1024;

SendReport refused(std::string error) {
  return {SendResult::refused, std::nullopt, std::move(error)};
}
SendReport unknown(std::string error) {
  return {SendResult::unknown, std::nullopt, std::move(error)};
}
SendReport answered(int status) {
  if (status >= 200 && status < 300) return {SendResult::delivered, status, ""};
  return {SendResult::refused, status, fmt::format("HTTP {}", status)};
}

// An error's few words; every way of running out of time reads alike.
std::string reason(const beast::error_code& ec) {
  if (ec == beast::error::timeout || ec == asio::error::operation_aborted) return "timed out";
  return ec.message();
}

// Resolves the URL's host, given up at `deadline` (the resolver has no timeout of its own).
asio::awaitable<tcp::resolver::results_type> resolve(const HttpUrl& url, Deadline deadline,
                                                     beast::error_code& ec) {
  auto executor = co_await asio::this_coro::executor;
  // Shared with the timer's handler, which may run after this frame is gone.
  auto resolver = std::make_shared<tcp::resolver>(executor);
  asio::steady_timer timer(executor, deadline);
  timer.async_wait([resolver](const beast::error_code& e) {
    if (!e) resolver->cancel();
  });
  auto results = co_await resolver->async_resolve(url.host, std::to_string(url.port),
                                                  tcp::resolver::numeric_service,
                                                  asio::redirect_error(asio::use_awaitable, ec));
  timer.cancel();
  co_return results;
}

// SNI and the checks of the server's certificate: chain to the CA store, host name.
std::optional<std::string> prepare_tls(TlsStream& stream, const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  const bool address = !ec;
  // SNI names a host, never an address (RFC 6066, section 3).
  if (!address && SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()) != 1) {
    return "TLS: the server name could not be set";
  }
  stream.set_verify_mode(ssl::verify_peer, ec);
  if (!ec) stream.set_verify_callback(ssl::host_name_verification(host), ec);
  if (ec) return "TLS: " + ec.message();
  return std::nullopt;
}

bhttp::request<bhttp::string_body> make_request(const HttpUrl& url, const SendRequest& request) {
  bhttp::request<bhttp::string_body> req{bhttp::verb::post, url.target, 11};
  req.set(bhttp::field::host, url.host_header);
  req.set(bhttp::field::user_agent, "OnceOrder");
  for (const auto& [name, value] : request.headers) req.set(name, value);
  req.keep_alive(false);
  req.body() = request.body;
  req.prepare_payload();
  return req;
}

// Writes the request and reads the answer. From the first byte written on, the receiver may
// have the request: no failure can then say it surely was not received.
template <class Stream>
asio::awaitable<void> exchange(Stream& stream, const HttpUrl& url, const SendRequest& request,
                               SendReport& report) {
  auto req = make_request(url, request);
  report = unknown("no answer");
  beast::error_code ec;
  co_await bhttp::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    report = unknown("sending the request failed: " + reason(ec));
    co_return;
  }
  beast::flat_buffer buffer;
  for (int i = 0; i <= kMaxInterimAnswers; ++i) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.header_limit(kAnswerHeaderLimit);
    parser.body_limit(WebhookSender::kAnswerBodyLimit);
    co_await bhttp::async_read(stream, buffer, parser,
                               asio::redirect_error(asio::use_awaitable, ec));
    // A body past the limit is left unread: the status it came with is the answer.
    const bool capped = ec == bhttp::error::body_limit && parser.is_header_done();
    if (ec && !capped) {
      report = unknown("no complete answer: " + reason(ec));
      co_return;
    }
    const int status = static_cast<int>(parser.get().result_int());
    if (status >= 200 || status < 100) {
      report = answered(status);
      co_return;
    }
    // An interim answer (100 Continue and the like): the final one follows.
  }
  report = unknown("no final answer");
}

asio::awaitable<void> send_one(ssl::context& tls, const SendRequest& request, SendReport& report,
                               Deadline deadline) {
  auto url = parse_http_url(request.url);
  if (!url.ok()) {
    report = refused("bad URL: " + url.status().message());
    co_return;
  }
  beast::error_code ec;
  auto endpoints = co_await resolve(*url, deadline, ec);
  if (ec) {
    report = refused("host name not resolved: " + reason(ec));
    co_return;
  }
  beast::tcp_stream tcp_stream(co_await asio::this_coro::executor);
  tcp_stream.expires_at(deadline);
  co_await tcp_stream.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    report = refused("no connection: " + reason(ec));
    co_return;
  }
  if (!url->tls) {
    co_await exchange(tcp_stream, *url, request, report);
    co_return;
  }
  TlsStream stream(std::move(tcp_stream), tls);
  beast::get_lowest_layer(stream).expires_at(deadline);
  if (auto problem = prepare_tls(stream, url->host)) {
    report = refused(*problem);
    co_return;
  }
  co_await stream.async_handshake(ssl::stream_base::client,
                                  asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    report = refused("TLS handshake failed: " + reason(ec));
    co_return;
  }
  co_await exchange(stream, *url, request, report);
}

}  // namespace webhook
}  // namespace

WebhookSender::WebhookSender() : tls_(std::make_unique<Tls>()) {
  namespace ssl = boost::asio::ssl;
  boost::system::error_code ec;
  tls_->context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                                ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                                ssl::context::no_tlsv1_1,
                            ec);
  if (!ec) tls_->context.set_default_verify_paths(ec);
  if (!ec) tls_->context.set_verify_mode(ssl::verify_peer, ec);
  // No CA store: every https endpoint is refused at its handshake, and says so.
  if (ec) spdlog::warn("webhook sender: TLS set-up failed: {}", ec.message());
}

WebhookSender::~WebhookSender() = default;

std::vector<SendReport> WebhookSender::send(std::span<const SendRequest> requests,
                                            std::chrono::milliseconds timeout) {
  // Each report says `refused` until the request's first byte is about to be written.
  std::vector<SendReport> reports(requests.size(), webhook::refused("not sent"));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  try {
    boost::asio::io_context io(1);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      boost::asio::co_spawn(io, webhook::send_one(tls_->context, requests[i], reports[i], deadline),
                            [&reports, i](std::exception_ptr e) {
                              if (!e) return;
                              // The classification made so far stands; only the words change.
                              try {
                                std::rethrow_exception(e);
                              } catch (const std::exception& ex) {
                                reports[i].error = std::string("send failed: ") + ex.what();
                              } catch (...) {
                                reports[i].error = "send failed";
                              }
                            });
    }
    io.run();
  } catch (const std::exception& e) {
    spdlog::error("webhook sender: {}", e.what());
  } catch (...) {
    spdlog::error("webhook sender: an unknown exception");
  }
  return reports;
}

}  // namespace onceorder::http
