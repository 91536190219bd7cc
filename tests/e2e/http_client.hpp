// A small blocking HTTP/1.1 client for the end-to-end tests: one keep-alive connection,
// reconnecting when the server closed it, every operation bounded by a timeout so that a
// broken server fails a test instead of hanging it. Not thread-safe: one per thread.
#pragma once

#include <utility>  // before any Asio header (Boost 1.74)

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace onceorder::testing {

struct HttpResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-case
  bool keep_alive = true;

  nlohmann::json json() const { return nlohmann::json::parse(body); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
  bool has_header(const std::string& name) const { return headers.contains(name); }
};

using Headers = std::vector<std::pair<std::string, std::string>>;

class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30))
      : endpoint_(boost::asio::ip::make_address("127.0.0.1"), port), timeout_(timeout) {}

  HttpResponse request(boost::beast::http::verb method, const std::string& target,
                       const std::string& body = {}, const Headers& headers = {}) {
    namespace bhttp = boost::beast::http;
    bhttp::request<bhttp::string_body> req{method, target, 11};
    req.set(bhttp::field::host, "127.0.0.1");
    for (const auto& [name, value] : headers) req.set(name, value);
    if (!body.empty() || method == bhttp::verb::post || method == bhttp::verb::put) {
      req.set(bhttp::field::content_type, "application/json");
      req.body() = body;
      req.prepare_payload();
    }
    connect();
    boost::beast::error_code ec;
    stream_->expires_after(timeout_);
    bhttp::async_write(*stream_, req, [&](boost::beast::error_code e, std::size_t) { ec = e; });
    run();
    if (ec) throw std::runtime_error("write failed: " + ec.message());
    return read_response();
  }

  HttpResponse get(const std::string& target, const Headers& headers = {}) {
    return request(boost::beast::http::verb::get, target, {}, headers);
  }
  HttpResponse post(const std::string& target, const std::string& body,
                    const Headers& headers = {}) {
    return request(boost::beast::http::verb::post, target, body, headers);
  }
  HttpResponse put(const std::string& target, const std::string& body,
                   const Headers& headers = {}) {
    return request(boost::beast::http::verb::put, target, body, headers);
  }

  // Sends `bytes` as they are and reads one response.
  HttpResponse raw(const std::string& bytes) {
    connect();
    boost::beast::error_code ec;
    stream_->expires_after(timeout_);
    boost::asio::async_write(*stream_, boost::asio::buffer(bytes),
                             [&](boost::beast::error_code e, std::size_t) { ec = e; });
    run();
    if (ec) throw std::runtime_error("write failed: " + ec.message());
    return read_response();
  }

  // True when the server closes the (open) connection within `wait`.
  bool closed_by_server(std::chrono::milliseconds wait) {
    if (!stream_) return true;
    char byte = 0;
    boost::beast::error_code ec;
    stream_->expires_after(wait);
    stream_->async_read_some(boost::asio::buffer(&byte, 1),
                             [&](boost::beast::error_code e, std::size_t) { ec = e; });
    run();
    const bool closed = ec && ec != boost::beast::error::timeout;
    stream_.reset();
    return closed;
  }

  // Whether a new connection is accepted (false: refused or timed out).
  bool can_connect() {
    stream_.reset();
    boost::beast::error_code ec;
    boost::beast::tcp_stream probe(io_);
    probe.expires_after(std::chrono::seconds(2));
    probe.async_connect(endpoint_, [&](boost::beast::error_code e) { ec = e; });
    run();
    return !ec;
  }

 private:
  void run() {
    io_.restart();
    io_.run();
  }

  void connect() {
    if (stream_) return;
    stream_.emplace(io_);
    buffer_.clear();
    boost::beast::error_code ec;
    stream_->expires_after(timeout_);
    stream_->async_connect(endpoint_, [&](boost::beast::error_code e) { ec = e; });
    run();
    if (ec) {
      stream_.reset();
      throw std::runtime_error("connect failed: " + ec.message());
    }
  }

  HttpResponse read_response() {
    namespace bhttp = boost::beast::http;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    boost::beast::error_code ec;
    stream_->expires_after(timeout_);
    bhttp::async_read(*stream_, buffer_, parser,
                      [&](boost::beast::error_code e, std::size_t) { ec = e; });
    run();
    if (ec) {
      stream_.reset();
      throw std::runtime_error("read failed: " + ec.message());
    }
    auto res = parser.release();
    HttpResponse out;
    out.status = res.result_int();
    out.body = res.body();
    out.keep_alive = res.keep_alive();
    for (const auto& field : res) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[name] = std::string(field.value());
    }
    if (!out.keep_alive) stream_.reset();
    return out;
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::endpoint endpoint_;
  std::chrono::milliseconds timeout_;
  std::optional<boost::beast::tcp_stream> stream_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace onceorder::testing
