#include "e2e/http_client.hpp"

#include <utility>  // before any Asio header (Boost 1.74)

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <map>
#include <optional>
#include <stdexcept>

namespace onceorder::testing {
namespace {

namespace bhttp = boost::beast::http;

bhttp::verb to_verb(Method method) {
  switch (method) {
    case Method::get:
      return bhttp::verb::get;
    case Method::head:
      return bhttp::verb::head;
    case Method::post:
      return bhttp::verb::post;
    case Method::put:
      return bhttp::verb::put;
    case Method::patch:
      return bhttp::verb::patch;
    case Method::delete_:
      return bhttp::verb::delete_;
    case Method::options:
      return bhttp::verb::options;
  }
  throw std::invalid_argument("unknown HTTP method");
}

std::map<std::uint16_t, std::string>& client_routes() {
  static std::map<std::uint16_t, std::string> table;
  return table;
}

std::string client_address_of(std::uint16_t port) {
  const auto it = client_routes().find(port);
  return it == client_routes().end() ? "127.0.0.1" : it->second;
}

}  // namespace

class HttpClient::Connection {
 public:
  Connection(std::uint16_t port, std::chrono::milliseconds timeout)
      : endpoint_(boost::asio::ip::make_address(client_address_of(port)), port),
        timeout_(timeout) {}

  HttpResponse request(Method method, const std::string& target, const std::string& body,
                       const Headers& headers) {
    const bhttp::verb verb = to_verb(method);
    bhttp::request<bhttp::string_body> req{verb, target, 11};
    req.set(bhttp::field::host, "127.0.0.1");
    for (const auto& [name, value] : headers) req.set(name, value);
    if (!body.empty() || verb == bhttp::verb::post || verb == bhttp::verb::put) {
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

void HttpClient::route(std::uint16_t port, const std::string& address) {
  client_routes()[port] = address;
}

HttpClient::HttpClient(std::uint16_t port, std::chrono::milliseconds timeout)
    : connection_(std::make_unique<Connection>(port, timeout)) {}

HttpClient::~HttpClient() = default;

HttpResponse HttpClient::request(Method method, const std::string& target, const std::string& body,
                                 const Headers& headers) {
  const bool own = std::any_of(headers.begin(), headers.end(), [](const auto& h) {
    return boost::beast::iequals(h.first, "authorization");
  });
  if (own || !token_) return connection_->request(method, target, body, headers);
  Headers with_token = headers;
  with_token.emplace_back("Authorization", "Bearer " + *token_);
  return connection_->request(method, target, body, with_token);
}

HttpResponse HttpClient::raw(const std::string& bytes) { return connection_->raw(bytes); }

bool HttpClient::closed_by_server(std::chrono::milliseconds wait) {
  return connection_->closed_by_server(wait);
}

bool HttpClient::can_connect() { return connection_->can_connect(); }

}  // namespace onceorder::testing
