#include <filesystem>
#include <fstream>
#include <iterator>

#include "http/problem.hpp"
#include "http/routes.hpp"

namespace onceorder::http {
namespace {

std::string_view content_type(std::string_view file) {
  const size_t dot = file.rfind('.');
  const std::string_view ext = dot == std::string_view::npos ? "" : file.substr(dot + 1);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "js") return "text/javascript; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  if (ext == "json") return "application/json";
  if (ext == "svg") return "image/svg+xml";
  if (ext == "png") return "image/png";
  if (ext == "ico") return "image/x-icon";
  return "text/plain; charset=utf-8";
}

}  // namespace

// `m.file` is already confined to the web directory by the router (no '..', no hidden
// segments), so joining is safe.
Response get_dashboard_file(const Services& s, const RouteMatch& m) {
  const std::string path = s.web_dir + "/" + m.file;
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(path, ec)) in.open(path, std::ios::binary);
  if (!in.is_open()) return problem_response(Status(Code::not_found, "no such page"));
  std::string content{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return problem_response(Status(Code::not_found, "no such page"));
  Response res =
      text_response(bhttp::status::ok, std::string(content_type(m.file)), std::move(content));
  res.set(bhttp::field::cache_control, "no-cache");
  // The dashboard loads nothing from elsewhere; say so to the browser.
  res.set("Content-Security-Policy",
          "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'");
  return res;
}

}  // namespace onceorder::http
