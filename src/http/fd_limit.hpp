// The process's limit on open descriptors (RLIMIT_NOFILE), which bounds how many client
// connections the server can hold: the soft limit is commonly 1024 while the hard limit
// allows far more, and a server at its limit can no longer accept anyone.
// Thread-safety: raise_open_file_limit changes the process; call it from one thread.
#pragma once

#include <cstdint>

namespace onceorder::http {

// Raises the soft limit to the hard one (at most 1,048,576) and returns the soft limit now
// in force.
std::uint64_t raise_open_file_limit();

// Client connections to allow: `requested`, but no more than fit below `soft_limit` while
// `reserved` descriptors stay free for everything else (database connections and files,
// logs, the listener); at least 1.
int connection_cap(int requested, std::uint64_t soft_limit, int reserved);

}  // namespace onceorder::http
