// The product's Sender (onceorder/service/outbox.hpp): each delivery an HTTP/1.1 POST over a new
// connection of its own (`Connection: close`), plain or TLS (OpenSSL through Asio, the system's
// CA store, peer and host name verification, SNI), all requests of one send() at once, each
// within the timeout from name resolution to the answer's last byte.
//
// How a send is classified is the safety of at_most_once (docs/EVENTS.md, "Modes"): a failure
// before the first byte of the request is written (the name, the connection, the TLS
// handshake) is `refused`; any failure or timeout once writing began is `unknown`; a complete
// answer is `delivered` for 2xx and `refused` (with its status) otherwise. An answer's body is
// read up to kAnswerBodyLimit; a longer one still counts as the status it carried.
//
// Thread-safety: send() may be called from several threads at once (the delivery workers
// share one sender); each call runs its own io_context. The CA store is read once, when the
// sender is made (SSL_CERT_FILE / SSL_CERT_DIR apply then). A name resolution that hangs
// (getaddrinfo cannot be cancelled) can hold send() past its timeout; it is still `refused`,
// and the worker's fence keeps a late outcome from being recorded.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "onceorder/service/outbox.hpp"

namespace onceorder::http {

class WebhookSender final : public Sender {
 public:
  WebhookSender();
  ~WebhookSender() override;
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  std::vector<SendReport> send(std::span<const SendRequest> requests,
                               std::chrono::milliseconds timeout) override;

  // The most of an answer's body that is read; the rest is left unread.
  static constexpr std::size_t kAnswerBodyLimit = 64 * 1024;

 private:
  struct Tls;
  std::unique_ptr<Tls> tls_;
};

}  // namespace onceorder::http
