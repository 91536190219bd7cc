// HTTPS for `serve`: the server's TLS context (from a certificate chain and a key in PEM
// files) and the rule that keeps a non-loopback listener from serving plain HTTP.
// Thread-safe (no shared state); a context, once made, is only read.
#pragma once

#include <utility>  // before any Asio header (Boost 1.74)

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <optional>
#include <string>

#include "onceorder/core/status.hpp"
#include "onceorder/http/http_server.hpp"

namespace onceorder::http {

// A server context for TLS 1.2 and later with OpenSSL's default cipher policy, no
// compression and no renegotiation. Fails (naming the file, never its contents) when either
// file cannot be read or the key does not belong to the certificate.
Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(const std::string& cert_file,
                                                                    const std::string& key_file);

// Plain HTTP is served on loopback only, unless a proxy in front terminates TLS
// (`behind_tls_proxy`): elsewhere tokens and data would cross the network in clear text.
Status check_transport(const boost::asio::ip::tcp::endpoint& endpoint, const std::string& listen,
                       bool tls, bool behind_tls_proxy);

// What `serve` listens with: the HTTPS context (null: plain HTTP) and the metrics listener's
// endpoint, checked before anything is bound (check_transport; --tls-cert and --tls-key go
// together).
struct Transport {
  std::shared_ptr<boost::asio::ssl::context> tls;
  std::optional<boost::asio::ip::tcp::endpoint> metrics;
};
Result<Transport> prepare_transport(const boost::asio::ip::tcp::endpoint& endpoint,
                                    const ServerOptions& options);

}  // namespace onceorder::http
