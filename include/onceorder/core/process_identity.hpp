// Who this process is, for the leases it takes in the database (order-id nodes, schedule
// items): "host:pid:random". The random part tells apart two processes that reuse a pid
// (a restart in a fresh container) so a lease is never mistaken for our own. Core's one
// piece of I/O: it reads the host name and the process id (gethostname, getpid).
//
// Thread-safety: safe to call from any thread; each call draws a new random part.
#pragma once

#include <string>

namespace onceorder {

std::string process_identity();

}  // namespace onceorder
