// `serve`'s edge settings on the command line (docs/SECURITY.md): per-principal rate limits,
// the separate /metrics listener, and the process hardening serve applies at start.
#pragma once

#include <CLI/CLI.hpp>

#include "onceorder/http/http_server.hpp"

namespace onceorder::cli {

// --rate-limit RATE[/s], --rate-burst N and --metrics-listen [ADDR:]PORT on `serve`.
void add_edge_options(CLI::App* serve, ServerOptions& options);

// Makes the process non-dumpable (Linux: no core file, and no ptrace or /proc/PID/mem, environ
// or fd reading by other processes of the same user): its memory holds tokens and the database
// password. A no-op elsewhere.
void harden_process();

}  // namespace onceorder::cli
