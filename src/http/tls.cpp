#include "http/tls.hpp"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "http/listen_address.hpp"

namespace onceorder::http {

namespace ssl = boost::asio::ssl;

namespace {

// OpenSSL's reason for the last failure, for the operator's log.
std::string tls_failure(const boost::system::error_code& ec) {
  const unsigned long err = ERR_get_error();
  ERR_clear_error();
  if (err == 0) return ec.message();
  char text[256];
  ERR_error_string_n(err, text, sizeof text);
  return text;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> make_tls_context(const std::string& cert_file,
                                                       const std::string& key_file) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::no_compression | ssl::context::single_dh_use,
                   ec);
  SSL_CTX* native = ctx->native_handle();
  // Renegotiation lets a client make the server redo handshakes at will (a cheap way to
  // burn its CPU); TLS 1.3 has none, and for 1.2 it is refused.
  if (!ec &&
      (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1 ||
       (SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION) & SSL_OP_NO_RENEGOTIATION) == 0)) {
    return Status(Code::internal, "cannot set the TLS protocol policy: " + tls_failure(ec));
  }
  ERR_clear_error();
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    return Status(Code::invalid_request, fmt::format("cannot load the TLS certificate {}: {}",
                                                     cert_file, tls_failure(ec)));
  }
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) {
    return Status(Code::invalid_request,
                  fmt::format("cannot load the TLS key {}: {}", key_file, tls_failure(ec)));
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return Status(Code::invalid_request,
                  fmt::format("the TLS key {} does not belong to the certificate {}: {}", key_file,
                              cert_file, tls_failure(ec)));
  }
  return ctx;
}

Status check_transport(const boost::asio::ip::tcp::endpoint& endpoint, const std::string& listen,
                       bool tls, bool behind_tls_proxy) {
  if (tls || behind_tls_proxy || is_loopback(endpoint.address())) return Status::Ok();
  return Status(Code::invalid_request,
                fmt::format("refusing to serve plain HTTP on {}, which is not loopback: give "
                            "--tls-cert and --tls-key to serve HTTPS, or --behind-tls-proxy when "
                            "a proxy in front terminates TLS",
                            listen));
}

Result<Transport> prepare_transport(const boost::asio::ip::tcp::endpoint& endpoint,
                                    const ServerOptions& options) {
  Transport t;
  if (options.tls_cert.has_value() != options.tls_key.has_value()) {
    return Status(Code::invalid_request, "--tls-cert and --tls-key go together: give both");
  }
  if (options.tls_cert) {
    OO_ASSIGN_OR_RETURN(t.tls, make_tls_context(*options.tls_cert, *options.tls_key));
  }
  OO_RETURN_IF_ERROR(
      check_transport(endpoint, options.listen, t.tls != nullptr, options.behind_tls_proxy));
  if (options.metrics_listen) {
    OO_ASSIGN_OR_RETURN(auto host_port, parse_listen(*options.metrics_listen));
    OO_ASSIGN_OR_RETURN(t.metrics, resolve_listen(host_port));
  }
  return t;
}

}  // namespace onceorder::http
