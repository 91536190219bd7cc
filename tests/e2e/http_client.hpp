// A small blocking HTTP/1.1 client for the end-to-end tests and the torture harness: one
// keep-alive connection, reconnecting when the server closed it, every operation bounded by a
// timeout so that a broken server fails a test instead of hanging it. Not thread-safe: one per
// thread. Beast stays in http_client.cpp, compiled once, so that the files using the client
// do not instantiate it again each.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
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

// The Authorization header of an API token.
inline Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

enum class Method { get, head, post, put, patch, delete_, options };

class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResponse request(Method method, const std::string& target, const std::string& body = {},
                       const Headers& headers = {});

  HttpResponse get(const std::string& target, const Headers& headers = {}) {
    return request(Method::get, target, {}, headers);
  }
  HttpResponse post(const std::string& target, const std::string& body,
                    const Headers& headers = {}) {
    return request(Method::post, target, body, headers);
  }
  HttpResponse put(const std::string& target, const std::string& body,
                   const Headers& headers = {}) {
    return request(Method::put, target, body, headers);
  }

  // Sends `bytes` as they are and reads one response.
  HttpResponse raw(const std::string& bytes);

  // True when the server closes the (open) connection within `wait`.
  bool closed_by_server(std::chrono::milliseconds wait);

  // Whether a new connection is accepted (false: refused or timed out).
  bool can_connect();

 private:
  class Connection;
  std::unique_ptr<Connection> connection_;
};

}  // namespace onceorder::testing
