#include "http/listen_address.hpp"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>
#include <charconv>

namespace onceorder::http {

namespace asio = boost::asio;

Result<HostPort> parse_listen(std::string_view listen) {
  auto bad = [&](std::string_view why) {
    return Status(Code::invalid_request,
                  fmt::format("bad listen address '{}': {} (expected host:port)", listen, why));
  };
  std::string_view host;
  std::string_view port;
  if (listen.starts_with('[')) {
    const size_t close = listen.find(']');
    if (close == std::string_view::npos) return bad("unclosed '['");
    host = listen.substr(1, close - 1);
    const std::string_view rest = listen.substr(close + 1);
    if (!rest.starts_with(':')) return bad("missing ':port'");
    port = rest.substr(1);
  } else {
    const size_t colon = listen.rfind(':');
    if (colon == std::string_view::npos) return bad("missing ':port'");
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return bad("write IPv6 addresses as [addr]:port");
  }
  if (host.empty()) return bad("the host is empty");
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    return bad("the port must be a number from 0 to 65535");
  }
  return HostPort{std::string(host), static_cast<std::uint16_t>(value)};
}

Result<asio::ip::tcp::endpoint> resolve_listen(const HostPort& hp) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(hp.host, ec);
  if (!ec) return asio::ip::tcp::endpoint(address, hp.port);
  asio::io_context io;
  asio::ip::tcp::resolver resolver(io);
  const auto results =
      resolver.resolve(hp.host, std::to_string(hp.port), asio::ip::tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return Status(Code::invalid_request, fmt::format("cannot resolve listen host '{}': {}", hp.host,
                                                     ec ? ec.message() : "no address"));
  }
  return results.begin()->endpoint();
}

bool is_loopback(const asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).is_loopback();
  }
  return address.is_loopback();
}

}  // namespace onceorder::http
