#include "http/edge.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "http/problem.hpp"

namespace onceorder::http {
namespace {

// Names every server answers to whatever it listens on: a page cannot rebind these to its
// own origin, since a browser sends them only to pages loaded from this machine.
constexpr std::array<std::string_view, 3> kLoopbackHosts = {"localhost", "127.0.0.1", "::1"};
// The longest port text (65535).
constexpr size_t kMaxPortDigits = 5;
constexpr std::string_view kHttpScheme = "http://";
constexpr std::string_view kHttpsScheme = "https://";

std::string edge_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view edge_trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool edge_iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && edge_iequals(s.substr(0, prefix.size()), prefix);
}

// reg-name and IPv4 characters (RFC 3986 unreserved and sub-delims less those a Host never
// needs); anything else in a Host is refused rather than compared.
bool is_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

bool is_port_text(std::string_view p) {
  return p.size() <= kMaxPortDigits &&
         std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A problem document for statuses the service codes do not have (421, 415, 501).
Response edge_problem(bhttp::status status, std::string_view code, std::string_view detail) {
  const nlohmann::json body = {
      {"type", "urn:onceorder:problem:" + std::string(code)},
      {"title", std::string(bhttp::obsolete_reason(status))},
      {"status", static_cast<int>(status)},
      {"detail", std::string(detail)},
      {"code", std::string(code)},
  };
  Response res = json_response(status, body);
  res.set(bhttp::field::content_type, "application/problem+json");
  return res;
}

Response bad_request(std::string detail) {
  return problem_response(Status(Code::invalid_request, std::move(detail)));
}

size_t count_fields(const Request& header, bhttp::field f) {
  const auto range = header.equal_range(f);
  return static_cast<size_t>(std::distance(range.first, range.second));
}

// `http[s]://host[:port]` normalized (lowercase, the scheme's default port dropped), or
// nullopt when `text` is not an origin.
std::optional<std::string> normalize_origin(std::string_view text) {
  const bool https = starts_with_nocase(text, kHttpsScheme);
  if (!https && !starts_with_nocase(text, kHttpScheme)) return std::nullopt;
  const auto authority = parse_authority(text.substr(https ? 8 : 7));
  if (!authority) return std::nullopt;
  const bool bracketed = authority->host.find(':') != std::string::npos;
  std::string out = std::string(https ? kHttpsScheme : kHttpScheme) +
                    (bracketed ? "[" + authority->host + "]" : authority->host);
  const std::string_view default_port = https ? "443" : "80";
  if (!authority->port.empty() && authority->port != default_port) out += ":" + authority->port;
  return out;
}

// The framing check's verdict on a Transfer-Encoding list: only a lone final `chunked` is
// read; a coding this server does not decode before it is 501.
std::optional<Response> transfer_coding_refusal(const std::vector<std::string>& codings) {
  if (codings.empty() || codings.back() != "chunked") {
    return bad_request("Transfer-Encoding must end in a single chunked coding");
  }
  for (size_t i = 0; i + 1 < codings.size(); ++i) {
    if (codings[i] == "chunked") return bad_request("Transfer-Encoding names chunked twice");
    if (codings[i].empty()) return bad_request("Transfer-Encoding has an empty coding");
  }
  if (codings.size() > 1) {
    return edge_problem(bhttp::status::not_implemented, "not_implemented",
                        "only the chunked transfer coding is supported");
  }
  return std::nullopt;
}

}  // namespace

std::optional<Authority> parse_authority(std::string_view text) {
  Authority out;
  std::string_view rest;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    const std::string_view v6 = text.substr(1, close - 1);
    const bool v6_chars = std::all_of(v6.begin(), v6.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
    });
    if (!v6_chars) return std::nullopt;
    out.host = edge_lower(v6);
    rest = text.substr(close + 1);
  } else {
    const size_t colon = text.find(':');
    const std::string_view host = text.substr(0, colon);
    if (host.empty() || !std::all_of(host.begin(), host.end(), is_host_char)) return std::nullopt;
    out.host = edge_lower(host);
    rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon);
  }
  if (!rest.empty()) {
    if (rest.front() != ':' || !is_port_text(rest.substr(1))) return std::nullopt;
    out.port = std::string(rest.substr(1));
  }
  return out;
}

Result<EdgePolicy> EdgePolicy::make(std::string_view listen_host,
                                    const std::vector<std::string>& hosts,
                                    const std::vector<std::string>& origins) {
  EdgePolicy policy;
  for (std::string_view h : kLoopbackHosts) policy.hosts_.emplace_back(h);
  policy.hosts_.push_back(edge_lower(listen_host));
  for (const std::string& entry : hosts) {
    const std::string_view text = edge_trim(entry);
    // An IPv6 literal may come without brackets (and then without a port).
    const bool bare_v6 = std::count(text.begin(), text.end(), ':') > 1 && !text.starts_with('[');
    const auto authority = parse_authority(bare_v6 ? "[" + std::string(text) + "]" : text);
    if (!authority) {
      return Status(Code::invalid_request,
                    fmt::format("--allowed-hosts: '{}' is not a host name or address", entry));
    }
    policy.hosts_.push_back(authority->host);
  }
  for (const std::string& entry : origins) {
    auto origin = normalize_origin(edge_trim(entry));
    if (!origin) {
      return Status(Code::invalid_request,
                    fmt::format("--allowed-origins: '{}' is not http[s]://host[:port]", entry));
    }
    policy.origins_.push_back(std::move(*origin));
  }
  return policy;
}

bool EdgePolicy::host_allowed(const Authority& authority) const {
  return std::find(hosts_.begin(), hosts_.end(), authority.host) != hosts_.end();
}

bool EdgePolicy::origin_allowed(std::string_view origin) const {
  const auto normalized = normalize_origin(edge_trim(origin));
  if (!normalized) return false;  // `null` (a sandboxed or file page) among them
  if (std::find(origins_.begin(), origins_.end(), *normalized) != origins_.end()) return true;
  const bool https = normalized->starts_with(kHttpsScheme);
  const auto authority = parse_authority(std::string_view(*normalized).substr(https ? 8 : 7));
  return authority && host_allowed(*authority);
}

std::optional<Response> framing_refusal(const Request& header) {
  const bool has_length = header.find(bhttp::field::content_length) != header.end();
  std::vector<std::string> codings;
  bool has_coding = false;
  const auto fields = header.equal_range(bhttp::field::transfer_encoding);
  for (auto field = fields.first; field != fields.second; ++field) {
    has_coding = true;
    std::string_view list = sv(field->value());
    for (;;) {
      const size_t comma = list.find(',');
      const std::string_view item = edge_trim(list.substr(0, comma));
      codings.push_back(edge_lower(item.substr(0, item.find(';'))));
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  if (!has_coding) return std::nullopt;
  if (has_length) return bad_request("Transfer-Encoding and Content-Length together");
  return transfer_coding_refusal(codings);
}

bool is_state_changing(bhttp::verb method) {
  return method != bhttp::verb::get && method != bhttp::verb::head &&
         method != bhttp::verb::options;
}

namespace {

// The authority of an absolute-form target (`http://host/path?q`), whose target becomes the
// origin form (`/path?q`); nullopt for an origin-form target; an empty host for a target
// that is neither.
std::optional<std::string> take_absolute_form(Request& header) {
  const std::string_view target = sv(header.target());
  const bool https = starts_with_nocase(target, kHttpsScheme);
  if (!https && !starts_with_nocase(target, kHttpScheme)) return std::nullopt;
  const std::string_view rest = target.substr(https ? 8 : 7);
  const size_t end = rest.find_first_of("/?");
  std::string authority(rest.substr(0, end));
  std::string path(end == std::string_view::npos ? "" : rest.substr(end));
  if (!path.starts_with('/')) path.insert(0, "/");
  header.target(path);
  return authority;
}

// A request with a body: a positive Content-Length or chunked (the framing check ran first).
bool has_body(const Request& header) {
  if (header.find(bhttp::field::transfer_encoding) != header.end()) return true;
  const auto length = header.find(bhttp::field::content_length);
  if (length == header.end()) return false;
  const std::string_view value = sv(length->value());
  return value.find_first_of("123456789") != std::string_view::npos;
}

// application/json, parameters (`; charset=utf-8`) allowed, in any case.
bool is_json_content_type(const Request& header) {
  if (count_fields(header, bhttp::field::content_type) != 1) return false;
  const std::string_view value = sv(header[bhttp::field::content_type]);
  return edge_iequals(edge_trim(value.substr(0, value.find(';'))), "application/json");
}

}  // namespace

std::optional<Response> EdgePolicy::check(Request& header) const {
  const size_t hosts = count_fields(header, bhttp::field::host);
  if (hosts > 1) return bad_request("more than one Host header");
  if (hosts == 0 && header.version() >= 11) return bad_request("an HTTP/1.1 request needs Host");
  if (auto refusal = framing_refusal(header)) return refusal;
  std::optional<std::string> authority_text = take_absolute_form(header);
  if (!authority_text && hosts == 1) authority_text = std::string(sv(header[bhttp::field::host]));
  if (authority_text) {
    const auto authority = parse_authority(edge_trim(*authority_text));
    if (!authority) return bad_request("the Host (or the target's authority) is not host[:port]");
    if (!host_allowed(*authority)) {
      return edge_problem(bhttp::status::misdirected_request, "misdirected_request",
                          "this server does not answer to that host name (see --allowed-hosts)");
    }
  }
  if (count_fields(header, bhttp::field::authorization) > 1) {
    return bad_request("more than one Authorization header");
  }
  if (is_state_changing(header.method())) {
    const size_t origins = count_fields(header, bhttp::field::origin);
    if (origins > 1 || (origins == 1 && !origin_allowed(sv(header[bhttp::field::origin])))) {
      return problem_response(Status(Code::forbidden,
                                     "requests from that Origin may not change anything here (see "
                                     "--allowed-origins)"));
    }
    if (has_body(header) && !is_json_content_type(header)) {
      return edge_problem(bhttp::status::unsupported_media_type, "unsupported_media_type",
                          "a request body must be Content-Type: application/json");
    }
  }
  return std::nullopt;
}

}  // namespace onceorder::http
