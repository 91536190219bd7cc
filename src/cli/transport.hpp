// serve's options for how clients reach it: HTTPS (--tls-cert, --tls-key), the promise that a
// proxy terminates TLS (--behind-tls-proxy) and the separate /metrics listener.
#pragma once

#include <CLI/CLI.hpp>

#include "onceorder/http/http_server.hpp"

namespace onceorder::cli {

// Adds the options to `serve`; parsing fills `options`.
void add_transport_options(CLI::App* serve, ServerOptions& options);

}  // namespace onceorder::cli
