// The `--listen host:port` address: parsing, name resolution and the loopback test that
// decides whether the server may run without tokens. Thread-safe (no shared state).
#pragma once

#include <utility>  // before any Asio header (Boost 1.74)

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "onceorder/core/status.hpp"

namespace onceorder::http {

struct HostPort {
  std::string host;  // without IPv6 brackets
  std::uint16_t port = 0;
};

// "127.0.0.1:8080", "[::1]:0", "localhost:8080". The port is required (0: pick a free one).
Result<HostPort> parse_listen(std::string_view listen);

// The endpoint to bind: an IP literal as is, a name through the resolver (first answer).
Result<boost::asio::ip::tcp::endpoint> resolve_listen(const HostPort& hp);

// 127.0.0.0/8, ::1 and IPv4-mapped 127.x addresses.
bool is_loopback(const boost::asio::ip::address& address);

}  // namespace onceorder::http
