#include "onceorder/core/http_url.hpp"

#include <cctype>
#include <charconv>

#include "onceorder/core/event_types.hpp"

namespace onceorder {
namespace {

Status bad(std::string_view why) {
  return Status(Code::invalid_request, "url: " + std::string(why));
}

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-';
}

// The authority "host[:port]" into `u`.
Status parse_authority(std::string_view a, HttpUrl& u) {
  if (a.find('@') != std::string_view::npos) return bad("a user name or password is not allowed");
  std::string_view port;
  bool has_port = false;
  if (a.starts_with('[')) {
    const auto close = a.find(']');
    if (close == std::string_view::npos || close == 1) return bad("an unclosed IPv6 address");
    u.host = std::string(a.substr(1, close - 1));
    for (char c : u.host) {
      if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) {
        return bad("an IPv6 address has only hex digits, ':' and '.'");
      }
    }
    const auto rest = a.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return bad("junk after an IPv6 address");
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
  } else {
    const auto colon = a.find(':');
    u.host = std::string(a.substr(0, colon));
    has_port = colon != std::string_view::npos;
    if (has_port) port = a.substr(colon + 1);
    if (u.host.empty()) return bad("no host");
    if (u.host.size() > 253) return bad("a host name is at most 253 characters");
    for (char c : u.host) {
      if (!host_char(c)) return bad("a host name has only letters, digits, '.' and '-'");
    }
  }
  u.port = u.tls ? 443 : 80;
  if (has_port) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
    if (ec != std::errc() || end != port.data() + port.size() || v < 1 || v > 65535 ||
        port.starts_with('0')) {
      return bad("the port is a number from 1 to 65535");
    }
    u.port = static_cast<std::uint16_t>(v);
  }
  u.host_header = std::string(a);
  return Status::Ok();
}

}  // namespace

Result<HttpUrl> parse_http_url(std::string_view url) {
  if (url.size() > EventLimits::kMaxUrl) return bad("at most 2048 bytes");
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) return bad("no whitespace, control or non-ASCII characters");
  }
  HttpUrl u;
  std::string_view rest;
  if (url.starts_with("https://")) {
    u.tls = true;
    rest = url.substr(8);
  } else if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else {
    return bad("the scheme is http:// or https://");
  }
  if (rest.find('#') != std::string_view::npos) return bad("a fragment (#) is not sent: drop it");
  const auto slash = rest.find_first_of("/?");
  OO_RETURN_IF_ERROR(parse_authority(rest.substr(0, slash), u));
  u.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (u.target.starts_with('?')) u.target.insert(0, "/");
  return u;
}

}  // namespace onceorder
