// The request and response types every HTTP handler speaks, and small builders for the
// responses they return. Pure; thread-compatible.
#pragma once

#include <utility>  // before any Asio / Beast header (Boost 1.74 awaitable.hpp misses it)

#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <string_view>

namespace onceorder::http {

namespace bhttp = boost::beast::http;

using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;

// Beast speaks boost::string_view; the rest of OnceOrder speaks std::string_view.
inline std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

// `body` serialized as application/json with the given status.
Response json_response(bhttp::status status, const nlohmann::json& body);
// Headers every answer carries: the server's name, no MIME sniffing, and no caching
// unless the handler chose a policy.
void add_common_headers(Response& res);
// Plain text (used by /metrics).
Response text_response(bhttp::status status, std::string content_type, std::string body);

}  // namespace onceorder::http
