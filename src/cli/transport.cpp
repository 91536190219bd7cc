#include "cli/transport.hpp"

namespace onceorder::cli {

void add_transport_options(CLI::App* serve, ServerOptions& options) {
  auto* cert = serve->add_option("--tls-cert", options.tls_cert,
                                 "PEM certificate chain: serve HTTPS (TLS 1.2+; read again on "
                                 "SIGHUP)");
  auto* key = serve->add_option("--tls-key", options.tls_key,
                                "PEM private key of --tls-cert (read again on SIGHUP)");
  cert->needs(key);
  key->needs(cert);
  serve->add_flag("--behind-tls-proxy", options.behind_tls_proxy,
                  "a proxy in front terminates TLS: allow plain HTTP on a non-loopback --listen");
}

}  // namespace onceorder::cli
