#include "onceorder/core/db_url.hpp"

#include <optional>

#include "onceorder/core/redact.hpp"

namespace onceorder {
namespace {

// Takes `pooler=…` out of the URI's query string (libpq refuses parameters it does not know).
// Returns its value; nullopt when absent.
std::optional<std::string> take_pooler_param(std::string& uri) {
  const auto q = uri.find('?');
  if (q == std::string::npos) return std::nullopt;
  std::string kept;
  std::optional<std::string> value;
  std::string_view rest = std::string_view(uri).substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view part = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (part.starts_with("pooler=")) {
      value = std::string(part.substr(7));
    } else if (!part.empty()) {
      if (!kept.empty()) kept += '&';
      kept += part;
    }
  }
  uri.resize(q);
  if (!kept.empty()) uri += "?" + kept;
  return value;
}

}  // namespace

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
    DbUrl out{Engine::postgres, std::string(url)};
    const auto pooler = take_pooler_param(out.target);
    if (pooler == "transaction") {
      out.transaction_pooler = true;
    } else if (pooler && *pooler != "session") {
      return bad("pooler= takes transaction or session");
    }
    return out;
  }
  if (url.empty()) return bad("it is empty");
  return bad("unknown scheme");
}

}  // namespace onceorder
