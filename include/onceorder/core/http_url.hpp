// An endpoint's URL (docs/EVENTS.md): `http://` or `https://`, a host (a name, an IPv4
// address or a bracketed IPv6 address), an optional port and a path with an optional query.
// No user name or password (a secret in a URL ends up in logs), no fragment, no whitespace or
// control character, at most EventLimits::kMaxUrl bytes. Any host is allowed, loopback too:
// a local relay is a common receiver.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "onceorder/core/status.hpp"

namespace onceorder {

struct HttpUrl {
  bool tls = false;
  std::string host;  // without brackets for IPv6
  std::uint16_t port = 0;
  std::string target;  // path and query, "/" at least
  // The Host header's value: host[:port] as written (brackets kept for IPv6).
  std::string host_header;
};

// invalid_request with the reason when `url` is not such a URL.
Result<HttpUrl> parse_http_url(std::string_view url);

}  // namespace onceorder
