#include "onceorder/db_url.hpp"

#include "onceorder/redact.hpp"

namespace onceorder {

std::string_view engine_name(Engine engine) {
  return engine == Engine::sqlite ? "sqlite" : "postgresql";
}

Result<DbUrl> parse_db_url(std::string_view url) {
  auto bad = [&](std::string why) {
    return Status(Code::invalid_request, "bad database URL '" + redact_db_url(url) +
                                             "': " + std::move(why) +
                                             " (expected sqlite:PATH or postgresql://…)");
  };
  if (url.starts_with("sqlite:")) {
    std::string_view path = url.substr(7);
    if (path.starts_with("//")) return bad("write sqlite:PATH, not sqlite://PATH");
    if (path.empty()) return bad("the SQLite file path is empty");
    return DbUrl{Engine::sqlite, std::string(path)};
  }
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    return DbUrl{Engine::postgres, std::string(url)};
  }
  if (url.empty()) return bad("it is empty");
  return bad("unknown scheme");
}

}  // namespace onceorder
