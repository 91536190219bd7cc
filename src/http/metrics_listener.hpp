// The separate /metrics listener (serve --metrics-listen): a small acceptor on a thread of its
// own that answers `GET /metrics` (and HEAD) and nothing else, one request per connection. It
// keeps the scrape off the main listener, which then answers /metrics 404 (docs/SECURITY.md),
// so a public API port need not show the business counters.
// Thread-safety: start, stop and port from one controlling thread.
#pragma once

#include <utility>  // before any Asio header (Boost 1.74)

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "http/message.hpp"
#include "onceorder/status.hpp"

namespace onceorder::http {

class MetricsListener {
 public:
  // Connections held at once; a scraper needs one, a few more leave room for a second.
  static constexpr int kMaxConnections = 8;
  // A scraper sends its request at once: the whole request, and the answer, get this long.
  static constexpr auto kRequestTime = std::chrono::seconds(10);

  // `render`: the /metrics answer; called on the listener's thread, so it must be thread-safe.
  explicit MetricsListener(std::function<Response()> render);
  ~MetricsListener();
  MetricsListener(const MetricsListener&) = delete;
  MetricsListener& operator=(const MetricsListener&) = delete;

  // Binds `address` ("PORT" alone means 127.0.0.1:PORT) and starts answering.
  Status start(std::string_view address);
  std::uint16_t port() const { return port_; }
  void stop();

 private:
  boost::asio::awaitable<void> accept_loop();
  boost::asio::awaitable<void> serve(boost::asio::ip::tcp::socket socket);

  std::function<Response()> render_;
  boost::asio::io_context io_{1};
  boost::asio::ip::tcp::acceptor acceptor_{io_};
  std::uint16_t port_ = 0;
  int open_ = 0;  // connections being served (listener thread only)
  std::thread thread_;
};

// "PORT" → "127.0.0.1:PORT"; anything else as given (host:port).
std::string metrics_listen_address(std::string_view value);

}  // namespace onceorder::http
