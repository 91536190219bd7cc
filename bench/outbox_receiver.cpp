// A fast webhook receiver for bench/outbox-push.sh and bench/outbox-lag.sh: answers every
// POST with 200 at once (one request per connection, as OnceOrder's sender opens them), counts
// the requests and their distinct Idempotency-Keys, and for the first arrival of each key
// records now − the body's "occurred_at" (the delivery lag, in ms). GET /stats answers the
// tally as text, GET /reset forgets it. One thread, Asio coroutines: its own CPU stays small next
// to the sender's. Prints its port on stdout once it listens; runs until killed.
#include <utility>  // before any Asio header (Boost 1.74)

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "onceorder/core/timestamp.hpp"

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct Tally {
  std::uint64_t requests = 0;
  std::unordered_set<std::int64_t> keys;
  std::vector<std::int64_t> lag_ms;        // one per distinct key whose body had an occurred_at
  std::int64_t first_ms = 0, last_ms = 0;  // first and last arrival of a new key
};

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The value of header `name` (lower-case) in `head`, or "" when it is missing.
std::string_view header_value(std::string_view head, std::string_view name) {
  std::size_t at = head.find("\r\n");
  while (at != std::string_view::npos && at + 2 < head.size()) {
    const std::size_t start = at + 2;
    const std::size_t end = head.find("\r\n", start);
    std::string_view line = head.substr(start, end - start);
    const std::size_t colon = line.find(':');
    if (colon == name.size() &&
        std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
          return a == std::tolower(static_cast<unsigned char>(b));
        })) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return v;
    }
    at = end;
  }
  return {};
}

// The p-quantile of the lags as text, counting `total` events of which those not received
// (yet) lag longer than any received: "inf" when the quantile falls among them.
std::string percentile(std::vector<std::int64_t> v, double p, std::size_t total) {
  total = std::max(total, v.size());
  if (total == 0) return "0";
  const auto k = static_cast<std::size_t>(p * static_cast<double>(total - 1));
  if (k >= v.size()) return "inf";
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return std::to_string(v[k]);
}

// GET /stats?total=N counts N events for the quantiles (default: those received).
std::string stats_text(const Tally& t, std::string_view target) {
  std::size_t total = 0;
  if (const std::size_t at = target.find("total="); at != std::string_view::npos) {
    std::from_chars(target.data() + at + 6, target.data() + target.size(), total);
  }
  return fmt::format(
      "requests {}\nunique {}\nlag_n {}\nlag_p50_ms {}\nlag_p99_ms {}\nlag_max_ms {}\n"
      "first_ms {}\nlast_ms {}\n",
      t.requests, t.keys.size(), t.lag_ms.size(), percentile(t.lag_ms, 0.50, total),
      percentile(t.lag_ms, 0.99, total), percentile(t.lag_ms, 1.0, total), t.first_ms, t.last_ms);
}

void count_delivery(std::string_view head, std::string_view body, Tally& t) {
  ++t.requests;
  const std::string_view key = header_value(head, "idempotency-key");
  std::int64_t id = 0;
  std::from_chars(key.data(), key.data() + key.size(), id);
  if (!t.keys.insert(id).second) return;  // a re-send
  const std::int64_t now = now_ms();
  if (t.first_ms == 0) t.first_ms = now;
  t.last_ms = now;
  constexpr std::string_view kAt = "\"occurred_at\":\"";
  const std::size_t at = body.find(kAt);
  if (at == std::string_view::npos) return;
  const std::size_t from = at + kAt.size();
  if (auto ms = onceorder::unix_ms_of(body.substr(from, body.find('"', from) - from))) {
    t.lag_ms.push_back(now - *ms);
  }
}

asio::awaitable<void> serve_one(tcp::socket socket, Tally& t) {
  boost::system::error_code ec;
  std::string buf;
  const std::size_t head_len = co_await asio::async_read_until(
      socket, asio::dynamic_buffer(buf), "\r\n\r\n", asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;
  const std::string head = buf.substr(0, head_len);
  const std::string_view length = header_value(head, "content-length");
  std::size_t body_len = 0;
  std::from_chars(length.data(), length.data() + length.size(), body_len);
  if (body_len > (1U << 20)) co_return;  // not a delivery
  if (buf.size() < head_len + body_len) {
    co_await asio::async_read(socket, asio::dynamic_buffer(buf),
                              asio::transfer_exactly(head_len + body_len - buf.size()),
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
  }
  std::string answer_body;
  if (head.starts_with("GET /stats")) {
    answer_body = stats_text(t, head.substr(0, head.find(' ', 4)));
  } else if (head.starts_with("GET /reset")) {
    t = Tally{};  // a timed phase after an untimed one counts alone
  } else {
    count_delivery(head, std::string_view(buf).substr(head_len, body_len), t);
  }
  const std::string answer = fmt::format(
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: "
      "close\r\n\r\n{}",
      answer_body.size(), answer_body);
  co_await asio::async_write(socket, asio::buffer(answer),
                             asio::redirect_error(asio::use_awaitable, ec));
  socket.shutdown(tcp::socket::shutdown_send, ec);
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, Tally& t) {
  for (;;) {
    boost::system::error_code ec;
    tcp::socket socket =
        co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) continue;
    asio::co_spawn(acceptor.get_executor(), serve_one(std::move(socket), t), asio::detached);
  }
}

}  // namespace

int main() {
  asio::io_context io(1);
  tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  acceptor.listen(4096);
  Tally tally;
  std::cout << acceptor.local_endpoint().port() << std::endl;
  asio::co_spawn(io, accept_loop(acceptor, tally), asio::detached);
  io.run();
  return 0;
}
