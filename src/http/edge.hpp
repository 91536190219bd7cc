// The HTTP edge: what a request's header must pass before its body is read or anything of it
// runs (docs/API.md, "The HTTP edge"). One Host, naming this server (a page that rebinds its
// own name to this address is refused 421); an Origin allowed to send a state-changing request
// (a page elsewhere cannot make a browser's no-preflight POST act here); a body of type
// application/json; framing a proxy in front and this server read alike (Transfer-Encoding
// ends in a single `chunked`, never alongside Content-Length); one Authorization.
// EdgePolicy is immutable once made and safe to share between threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.hpp"
#include "onceorder/core/status.hpp"

namespace onceorder::http {

// An authority (`host[:port]`, IPv6 in brackets) split: the host lowercase, without brackets;
// the port's digits (maybe empty). nullopt when it is not such text.
struct Authority {
  std::string host;
  std::string port;
};
std::optional<Authority> parse_authority(std::string_view text);

class EdgePolicy {
 public:
  // `listen_host`: --listen's host. `hosts`: --allowed-hosts (names or IP literals, a port
  // ignored), allowed besides the loopback names and the listen host. `origins`:
  // --allowed-origins (`http[s]://host[:port]`), allowed besides those of the allowed hosts.
  // A malformed entry is an error naming it.
  static Result<EdgePolicy> make(std::string_view listen_host,
                                 const std::vector<std::string>& hosts,
                                 const std::vector<std::string>& origins);

  // True when `authority` (a Host value) names an allowed host, on any port.
  bool host_allowed(const Authority& authority) const;
  // True when `origin` (an Origin value) may send state-changing requests here.
  bool origin_allowed(std::string_view origin) const;

  // The refusal of a request whose header breaks an edge rule, checked before its body is
  // read; nullopt admits it. An absolute-form target (`http://host/path`) is rewritten to
  // its origin form, its authority checked as the Host. Every refusal closes the connection.
  std::optional<Response> check(Request& header) const;

 private:
  std::vector<std::string> hosts_;    // lowercase, without brackets
  std::vector<std::string> origins_;  // normalized: lowercase, default port dropped
};

// The framing problem of a request header (Transfer-Encoding other than one final `chunked`,
// or together with Content-Length), as its refusal; nullopt when it is sound.
std::optional<Response> framing_refusal(const Request& header);

// True for methods that may change state (everything but GET, HEAD and OPTIONS).
bool is_state_changing(bhttp::verb method);

}  // namespace onceorder::http
