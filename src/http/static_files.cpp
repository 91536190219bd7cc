#include "http/embedded_files.hpp"
#include "http/problem.hpp"
#include "http/routes.hpp"

namespace onceorder::http {
namespace {

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 9110 If-None-Match: `*` or a list of entity tags, compared weakly (a `W/` prefix is
// ignored), so that a cache holding a weak copy of the same bytes is answered 304 too.
bool none_match_hits(std::string_view header, std::string_view etag) {
  if (trim_spaces(header) == "*") return true;
  while (!header.empty()) {
    const size_t comma = header.find(',');
    std::string_view tag = trim_spaces(header.substr(0, comma));
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag == etag) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

const EmbeddedFile* find_embedded_file(std::string_view path) {
  // A handful of files: a scan needs no order in the generated table.
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

Response get_embedded_file(const Request& req, std::string_view path) {
  const EmbeddedFile* file = find_embedded_file(path);
  if (!file) return problem_response(Status(Code::not_found, "no such page"));
  Response res;
  const auto inm = req.find(bhttp::field::if_none_match);
  if (inm != req.end() && none_match_hits(sv(inm->value()), file->etag)) {
    // No Content-Length: a 304's would have to be the 200's (RFC 9110 15.4.5), and none is
    // needed (a 304 never has a body).
    res = Response{bhttp::status::not_modified, 11};
  } else {
    res = text_response(bhttp::status::ok, std::string(file->content_type),
                        std::string(file->content));
  }
  res.set(bhttp::field::etag, std::string(file->etag));
  // A browser keeps its copy but asks each time; the ETag makes asking cost one 304.
  res.set(bhttp::field::cache_control, "no-cache");
  // The dashboard loads nothing from elsewhere; say so to the browser.
  res.set("Content-Security-Policy",
          "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'");
  return res;
}

}  // namespace onceorder::http
