#include "cli/tokens.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "http/auth.hpp"
#include "http/tokens_file.hpp"
#include "onceorder/core/db_url.hpp"
#include "onceorder/core/limits.hpp"

namespace onceorder::cli {

int token_new(const std::string& role, const std::string& name) {
  auto token = http::new_token();
  if (!token.ok()) return fail(token.status());
  const std::string line = http::digest_line(*token, role, name);
  // The line must load as the file would load it; its errors quote nothing, so say here what
  // was wrong with the arguments (which are no secret).
  const bool one_word_each = role.find_first_of(" \t\r\n#") == std::string::npos &&
                             name.find_first_of(" \t\r\n") == std::string::npos;
  if (!one_word_each || !http::TokenTable::parse(line).ok()) {
    return fail(Status(Code::invalid_request,
                       fmt::format("token new: '{}' '{}': ROLE must be admin, operator, viewer or "
                                   "customer:<id>, and NAME 1-{} characters of [A-Za-z0-9._@-]",
                                   role, name, kMaxPrincipalName)));
  }
  std::cout << "token: " << *token << "\nline: " << line << '\n';
  return 0;
}

Result<ServeTokens> serve_tokens_file(const std::string& db_url, const std::string& state_dir) {
  OO_ASSIGN_OR_RETURN(auto url, parse_db_url(db_url));
  const char* env = std::getenv("STATE_DIRECTORY");
  const std::string path = http::default_tokens_path(url, state_dir, env ? env : "");
  OO_ASSIGN_OR_RETURN(std::optional<std::string> created, http::create_tokens_file(path));
  if (!created) {
    spdlog::info("msg=\"using the tokens file\" path={}", path);
    return ServeTokens{path, std::nullopt};
  }
  spdlog::warn(
      "msg=\"created a tokens file with one admin token, printed once on stdout\" "
      "path={}",
      path);
  // stdout, not the log: the operator needs it once, and it is stored nowhere.
  std::cout << fmt::format(
                   "onceorder: created {} with one admin token (shown only now; the file "
                   "keeps its SHA-256):\nadmin token: {}\n",
                   path, *created)
            << std::flush;
  return ServeTokens{path, std::move(created)};
}

void print_console_url(const ServeTokens& tokens, const std::string& listen, int port) {
  if (!tokens.created_token) return;
  const std::string host = listen.substr(0, listen.rfind(':'));
  std::cout << fmt::format("console: http://{}:{}/#token={}\n", host, port, *tokens.created_token)
            << std::flush;
}

}  // namespace onceorder::cli
