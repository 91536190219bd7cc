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
#include <optional>
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

// The admin token every harness that starts a server without a tokens file of the test's own
// gives it (the in-process fixture, ServeProcess, the torture cluster), and that a client sends
// unless told otherwise: one place, so that tests need not each carry a token.
inline constexpr const char* kTestAdminToken = "oo_test-admin-token-0123456789abcdefghijkl";
// A tokens file's text admitting kTestAdminToken as admin `test-admin`.
inline std::string test_tokens_text() {
  return std::string(kTestAdminToken) + " admin test-admin\n";
}

enum class Method { get, head, post, put, patch, delete_, options };

class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `headers`, and `Authorization: Bearer <token()>` unless they name Authorization.
  HttpResponse request(Method method, const std::string& target, const std::string& body = {},
                       const Headers& headers = {});

  // The token sent by default (kTestAdminToken unless set; nullopt: none).
  const std::optional<std::string>& token() const { return token_; }
  void set_token(std::optional<std::string> token) { token_ = std::move(token); }

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

  // Clients made afterwards for `port` connect to `address` instead of 127.0.0.1: the torture
  // harness's servers in network namespaces of their own (each on a port of its own). Call
  // before the clients' threads start.
  static void route(std::uint16_t port, const std::string& address);

 private:
  class Connection;
  std::unique_ptr<Connection> connection_;
  std::optional<std::string> token_ = std::string(kTestAdminToken);
};

}  // namespace onceorder::testing
