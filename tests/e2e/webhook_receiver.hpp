// A webhook receiver for the end-to-end tests: a loopback HTTP server on threads of its own
// that reads each request whole, logs it, and reacts as the test's `decide` says: an answer
// with a status, the connection closed without one (after reading the request), or either
// after a stall. Blocking Asio sockets, one thread per connection.
// Thread-safety: every member may be called from any thread.
#pragma once

#include <utility>  // before any Asio header (Boost 1.74)

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace onceorder::testing {

struct Received {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-case
  std::string body;
  int status = 0;  // what the receiver answered (0: nothing)
  std::chrono::steady_clock::time_point at;
  int index = 0;  // arrival order: requests are logged in it, whatever order they end in
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct Reaction {
  int status = 200;  // 0: close the connection without an answer
  std::chrono::milliseconds stall{0};
  static Reaction answer(int s) { return {s, {}}; }
  static Reaction drop() { return {0, {}}; }
};

class WebhookReceiver {
 public:
  // `index` counts the requests received so far, from 0.
  using Decide = std::function<Reaction(const Received&, int index)>;

  explicit WebhookReceiver(Decide decide = {})
      : decide_(std::move(decide)),
        acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~WebhookReceiver() {
    stopping_ = true;
    boost::asio::ip::tcp::socket wake(io_);  // unblocks accept()
    boost::system::error_code ec;
    wake.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ec);
    accept_thread_.join();
    std::vector<std::thread> handlers;
    {
      std::lock_guard lock(mu_);
      handlers.swap(handlers_);
    }
    for (auto& t : handlers) t.join();
  }
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  void set_decide(Decide decide) {
    std::lock_guard lock(mu_);
    decide_ = std::move(decide);
  }
  std::vector<Received> received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  // True once `n` requests were received and reacted to, false after `wait`.
  bool wait_for(std::size_t n, std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, wait, [&] { return received_.size() >= n; });
  }

 private:
  void accept_loop() {
    for (;;) {
      boost::asio::ip::tcp::socket s(io_);
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (ec || stopping_) return;
      std::lock_guard lock(mu_);
      handlers_.emplace_back([this, sock = std::move(s)]() mutable { handle(sock); });
    }
  }

  void handle(boost::asio::ip::tcp::socket& s) {
    Received r;
    if (!read_request(s, r)) return;
    r.at = std::chrono::steady_clock::now();
    Decide decide;
    int index = 0;
    {
      std::lock_guard lock(mu_);
      decide = decide_;
      index = next_index_++;
    }
    const Reaction reaction = decide ? decide(r, index) : Reaction::answer(200);
    if (reaction.stall.count() > 0) std::this_thread::sleep_for(reaction.stall);
    boost::system::error_code ec;
    if (reaction.status > 0) {
      const std::string answer = "HTTP/1.1 " + std::to_string(reaction.status) +
                                 " X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
      boost::asio::write(s, boost::asio::buffer(answer), ec);
    }
    r.status = ec ? 0 : reaction.status;
    r.index = index;
    s.close(ec);
    std::lock_guard lock(mu_);
    auto at = std::upper_bound(received_.begin(), received_.end(), index,
                               [](int i, const Received& x) { return i < x.index; });
    received_.insert(at, std::move(r));
    changed_.notify_all();
  }

  // The request line, header and Content-Length body; false when it did not arrive whole.
  static bool read_request(boost::asio::ip::tcp::socket& s, Received& r) {
    std::string data;
    boost::system::error_code ec;
    const std::size_t head =
        boost::asio::read_until(s, boost::asio::dynamic_buffer(data), "\r\n\r\n", ec);
    if (ec) return false;
    std::size_t pos = data.find("\r\n");
    const std::string line = data.substr(0, pos);
    r.method = line.substr(0, line.find(' '));
    r.target = line.substr(r.method.size() + 1, line.rfind(' ') - r.method.size() - 1);
    for (pos += 2; pos < head - 2;) {
      const std::size_t end = data.find("\r\n", pos);
      const std::string field = data.substr(pos, end - pos);
      const std::size_t colon = field.find(':');
      std::string name = field.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const std::size_t value = field.find_first_not_of(' ', colon + 1);
      r.headers[name] = value == std::string::npos ? "" : field.substr(value);
      pos = end + 2;
    }
    const std::size_t length =
        r.headers.contains("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    r.body = data.substr(head);
    if (r.body.size() < length) {
      const std::size_t have = r.body.size();
      r.body.resize(length);
      boost::asio::read(s, boost::asio::buffer(r.body.data() + have, length - have), ec);
      if (ec) return false;
    }
    return true;
  }

  Decide decide_;  // guarded by mu_
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::thread> handlers_;  // guarded by mu_
  std::vector<Received> received_;     // guarded by mu_
  int next_index_ = 0;                 // guarded by mu_
};

}  // namespace onceorder::testing
