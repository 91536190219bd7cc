// `onceorder token new` and the tokens file `serve` uses when it is given none
// (http/tokens_file.hpp says where it lives).
#pragma once

#include <optional>
#include <string>

#include "onceorder/core/status.hpp"

namespace onceorder::cli {

// Prints a fresh token and the tokens-file line that admits it as ROLE (NAME, when given),
// in its `sha256:` form: `token: …` and `line: …`. Exit code: 0, or 2 on a bad role or name.
int token_new(const std::string& role, const std::string& name);

struct ServeTokens {
  std::string path;
  std::optional<std::string> created_token;  // when this start created the file
};

// The tokens file serve reads when --tokens is not given: found, or created at first start
// with one admin token, which is then printed on stdout (once: it is not stored) and never
// logged. `state_dir`: --state-dir (empty: not given).
Result<ServeTokens> serve_tokens_file(const std::string& db_url, const std::string& state_dir);

// After the server has started on `port`: prints the console's address that logs in with a
// token the start created (in the URL's fragment, which a browser never sends).
void print_console_url(const ServeTokens& tokens, const std::string& listen, int port);

}  // namespace onceorder::cli
