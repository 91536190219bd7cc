// The files the server answers with from its own binary: the dashboard (web/) and the OpenAPI
// document (docs/openapi.json), keyed by the URL path they are served at. The table is
// generated at build time by cmake/embed_files.cmake, so an installed binary needs nothing
// from the source tree. Immutable; thread-safe.
#pragma once

#include <span>
#include <string_view>

namespace onceorder::http {

struct EmbeddedFile {
  std::string_view path;          // "/index.html"
  std::string_view content;       // the file's bytes
  std::string_view content_type;  // from the file's extension
  std::string_view etag;          // strong, quoted: a hash of `content`
};

// Every embedded file.
std::span<const EmbeddedFile> embedded_files();

// The file served at `path`, or nullptr.
const EmbeddedFile* find_embedded_file(std::string_view path);

}  // namespace onceorder::http
