#include "receiver.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>

#include <nlohmann/json.hpp>

#include "onceorder/core/signature.hpp"

namespace onceorder::torture {
namespace {

// One request as read off the connection: header names lower-case.
struct RawRequest {
  std::map<std::string, std::string> headers;
  std::string body;
};

std::string lower_text(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  const size_t b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// Reads one whole request (headers and a Content-Length body); false when the connection
// ended or broke first.
bool read_request(int fd, RawRequest& out) {
  std::string data;
  std::array<char, 16384> buf{};
  size_t head_end = std::string::npos;
  while (head_end == std::string::npos) {
    const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0 || data.size() > 65536) return false;
    data.append(buf.data(), static_cast<size_t>(n));
    head_end = data.find("\r\n\r\n");
  }
  size_t pos = data.find("\r\n") + 2;  // past the request line
  while (pos < head_end) {
    const size_t eol = data.find("\r\n", pos);
    const std::string line = data.substr(pos, eol - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos)
      out.headers[lower_text(trimmed(line.substr(0, colon)))] = trimmed(line.substr(colon + 1));
    pos = eol + 2;
  }
  size_t length = 0;
  if (auto it = out.headers.find("content-length"); it != out.headers.end())
    length = static_cast<size_t>(std::stoull(it->second));
  out.body = data.substr(head_end + 4);
  while (out.body.size() < length) {
    const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) return false;
    out.body.append(buf.data(), static_cast<size_t>(n));
  }
  return true;
}

void answer(int fd, int status, const char* reason) {
  const std::string res = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                          "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  (void)send(fd, res.data(), res.size(), MSG_NOSIGNAL);
}

std::string header_of(const RawRequest& r, const char* name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? std::string() : it->second;
}

const char* check_name(SignatureCheck c) {
  switch (c) {
    case SignatureCheck::ok:
      return "ok";
    case SignatureCheck::malformed:
      return "malformed";
    case SignatureCheck::stale:
      return "stale";
    case SignatureCheck::mismatch:
      return "mismatch";
  }
  return "malformed";
}

}  // namespace

std::string sha256_hex(const std::string& data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr);
  constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[md[i] >> 4];
    hex += kHex[md[i] & 15];
  }
  return hex;
}

Receiver::Receiver(ReceiverOptions options, HistoryWriter& history)
    : options_(std::move(options)), history_(history) {}

Receiver::~Receiver() { stop(); }

bool Receiver::start() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return false;
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, options_.address.c_str(), &addr.sin_addr) != 1) return false;
  socklen_t len = sizeof addr;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 256) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(listen_fd_);
    listen_fd_ = -1;
    return false;
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
  return true;
}

void Receiver::stop() {
  if (!acceptor_.joinable()) return;
  stopping_ = true;
  acceptor_.join();
  close(listen_fd_);
  listen_fd_ = -1;
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return active_ == 0; });
}

void Receiver::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    {
      std::lock_guard lock(mu_);
      ++active_;
    }
    std::thread([this, fd] {
      serve(fd);
      close(fd);
      std::lock_guard lock(mu_);
      if (--active_ == 0) idle_.notify_all();
    }).detach();
  }
}

void Receiver::fault(ReceiverFault fault, std::chrono::milliseconds length) {
  std::lock_guard lock(mu_);
  fault_ = fault;
  fault_until_ = std::chrono::steady_clock::now() + length;
}

ReceiverFault Receiver::current_fault() const {
  std::lock_guard lock(mu_);
  return std::chrono::steady_clock::now() < fault_until_ ? fault_ : ReceiverFault::none;
}

bool Receiver::acted_on(std::int64_t event_id) const {
  std::lock_guard lock(mu_);
  return acted_.contains(event_id);
}

void Receiver::serve(int fd) {
  timeval tv{5, 0};  // a sender that stops mid-request does not hold the thread for long
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  RawRequest req;
  if (!read_request(fd, req)) return;  // never read whole: it cannot have been acted on
  ++requests_;
  std::string verified = "unsigned";
  if (!options_.secret.empty())
    verified = check_name(verify_signature(header_of(req, "onceorder-signature"), options_.secret,
                                           req.body, std::time(nullptr)));
  switch (current_fault()) {
    case ReceiverFault::fail:
      log(req.headers, req.body, verified, "fail", false);
      answer(fd, 500, "Internal Server Error");
      return;
    case ReceiverFault::stall:
      log(req.headers, req.body, verified, "stall", true);
      std::this_thread::sleep_for(options_.stall);
      return;
    case ReceiverFault::drop:
      log(req.headers, req.body, verified, "drop", true);
      return;
    case ReceiverFault::none:
      break;
  }
  if (verified != "ok" && verified != "unsigned") {
    log(req.headers, req.body, verified, "refused", false);
    answer(fd, 401, "Unauthorized");
    return;
  }
  if (options_.act_time.count() > 0) std::this_thread::sleep_for(options_.act_time);
  // Recorded before the answer: what a sender learns of (the 2xx) comes after it.
  log(req.headers, req.body, verified, "ok", true);
  answer(fd, 200, "OK");
}

void Receiver::log(const std::map<std::string, std::string>& headers, const std::string& body,
                   const std::string& verified, const char* did, bool acted) {
  auto header = [&](const char* name) {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  };
  const auto event = nlohmann::json::parse(body, nullptr, false);
  const std::int64_t id =
      event.is_object() && event.contains("id") && event["id"].is_number_integer()
          ? event["id"].get<std::int64_t>()
          : -1;
  const std::string sha = sha256_hex(body);
  nlohmann::json line = {{"phase", "receive"},
                         {"endpoint", options_.name},
                         {"event_id", id},
                         {"event_key", event.is_object() ? event.value("key", "") : ""},
                         {"idempotency_key", header("idempotency-key")},
                         {"attempt", header("onceorder-attempt")},
                         {"signature", header("onceorder-signature")},
                         {"sha", sha},
                         {"verified", verified},
                         {"did", did},
                         {"acted", acted}};
  // The lock covers the record too: the history's order is the order of arrival.
  std::lock_guard lock(mu_);
  if (bodies_[id].insert(sha).second) line["body"] = body;  // each distinct body once
  if (acted) acted_.insert(id);
  history_.record(line);
}

}  // namespace onceorder::torture
