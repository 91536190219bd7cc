#include "http/message.hpp"

namespace onceorder::http {

Response json_response(bhttp::status status, const nlohmann::json& body) {
  // error_handler::replace: a string the services hand back is never a reason to fail the
  // whole response (they are validated UTF-8, but stored legacy data might not be).
  return text_response(status, "application/json",
                       body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void add_common_headers(Response& res) {
  res.set(bhttp::field::server, "OnceOrder");
  res.set("X-Content-Type-Options", "nosniff");
  if (res.find(bhttp::field::cache_control) == res.end()) {
    res.set(bhttp::field::cache_control, "no-store");
  }
}

Response text_response(bhttp::status status, std::string content_type, std::string body) {
  Response res{status, 11};
  res.set(bhttp::field::content_type, std::move(content_type));
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

}  // namespace onceorder::http
