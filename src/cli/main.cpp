// `onceorder` — the command line (API.md "Command line"). Each subcommand opens the
// database named by --db / ONCEORDER_DB, does one job and exits 0 on success, 1 when
// `check` finds violations, 2 on any error (printed as one clear line on stderr).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/demo.hpp"
#include "onceorder/db_url.hpp"
#include "onceorder/http_server.hpp"
#include "onceorder/invariants.hpp"
#include "onceorder/numbering.hpp"
#include "onceorder/store.hpp"

namespace {

using namespace onceorder;

int fail(const Status& st) {
  std::cerr << "onceorder: " << st.message() << '\n';
  for (const auto& f : st.fields()) std::cerr << "  " << f.field << ": " << f.message << '\n';
  return 2;
}

Result<std::unique_ptr<store::Database>> open_db(const std::string& url, int pool_size = 8) {
  OO_ASSIGN_OR_RETURN(auto parsed, parse_db_url(url));
  store::DatabaseOptions options;
  options.pool_size = pool_size;
  auto db = store::Database::open(parsed, options);
  if (!db.ok()) return Status(db.status().code(), db.status().message() + " (--db " + url + ")");
  return db;
}

// Opens and brings the schema up to date (serve, demo and the importers all need it).
Result<std::unique_ptr<store::Database>> open_migrated(const std::string& url, int pool_size = 8) {
  OO_ASSIGN_OR_RETURN(auto db, open_db(url, pool_size));
  OO_ASSIGN_OR_RETURN(int version, store::migrate(*db));
  spdlog::debug("schema at version {}", version);
  return db;
}

store::Clock::time_point deadline_in(std::chrono::seconds s) { return store::Clock::now() + s; }

int run_check(const std::string& url, bool json) {
  auto db = open_db(url);
  if (!db.ok()) return fail(db.status());
  auto results = check_invariants(**db, deadline_in(std::chrono::seconds(300)));
  if (!results.ok()) return fail(results.status());
  bool ok = true;
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& r : *results) {
    ok = ok && r.violations == 0;
    checks.push_back(
        {{"id", r.id}, {"name", r.name}, {"violations", r.violations}, {"sample", r.sample}});
    if (!json) {
      std::cout << fmt::format("{} {:<4} {} ({} violations)\n", r.violations == 0 ? "ok  " : "FAIL",
                               r.id, r.name, r.violations);
      for (const auto& s : r.sample) std::cout << "       " << s << '\n';
    }
  }
  if (json) std::cout << nlohmann::json{{"ok", ok}, {"checks", checks}}.dump(2) << '\n';
  return ok ? 0 : 1;
}

int run_import_documents(const std::string& url, const std::string& scope,
                         const std::string& scheme_text, const std::string& file) {
  auto scheme = parse_scheme(scheme_text);
  if (!scheme.ok()) return fail(scheme.status());
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(Status(Code::invalid_request, "cannot read " + file));
  std::stringstream text;
  text << in.rdbuf();
  auto db = open_migrated(url);
  if (!db.ok()) return fail(db.status());
  Numbering numbering(**db);
  auto report =
      numbering.import_legacy(scope, *scheme, text.str(), deadline_in(std::chrono::seconds(300)));
  if (!report.ok()) return fail(report.status());
  std::cout << fmt::format("imported {} documents into scope '{}'; its counter is at {}\n",
                           report->imported, scope, report->last_value);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"OnceOrder: orders made once, numbers handed out once"};
  app.require_subcommand(1);
  std::string db_url(kDefaultDbUrl);
  if (const char* env = std::getenv("ONCEORDER_DB"); env && *env) db_url = env;
  app.add_option("--db", db_url, "database URL: sqlite:PATH or postgresql://… (env ONCEORDER_DB)");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "debug logging");

  auto* serve = app.add_subcommand("serve", "run the HTTP server (migrates first)");
  ServerOptions server_options;
  int pool_size = 8;
  int request_timeout_ms = 5000;
  std::string tokens;
  serve->add_option("--listen", server_options.listen, "host:port to listen on")
      ->capture_default_str();
  serve->add_option("--tokens", tokens, "tokens file: one 'token role' per line");
  serve->add_option("--pool-size", pool_size, "database connections (and request workers)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  serve->add_option("--request-timeout-ms", request_timeout_ms, "deadline per request")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();

  auto* migrate = app.add_subcommand("migrate", "bring the schema up to date");
  auto* demo = app.add_subcommand("demo", "load a small demo data set");
  auto* check = app.add_subcommand("check", "run the invariants; exit 1 when any is violated");
  bool check_json = false;
  check->add_flag("--json", check_json, "machine-readable output");

  auto* legacy = app.add_subcommand("legacy", "legacy data tools");
  legacy->require_subcommand(1);
  auto* import_docs = legacy->add_subcommand("import-documents", "import legacy document numbers");
  std::string scope, scheme, file;
  import_docs->add_option("--scope", scope, "document scope")->required();
  import_docs->add_option("--scheme", scheme, "dec3 | hex3 | dec4")->required();
  import_docs->add_option("FILE", file, "UTF-8 CSV: number[,title]")->required();

  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z level=%l %v");

  if (*migrate) {
    auto db = open_db(db_url);
    if (!db.ok()) return fail(db.status());
    auto version = store::migrate(**db);
    if (!version.ok()) return fail(version.status());
    std::cout << fmt::format("schema at version {} ({})\n", *version, engine_name((*db)->engine()));
    return 0;
  }
  if (*demo) {
    auto db = open_migrated(db_url);
    if (!db.ok()) return fail(db.status());
    Status st = cli::load_demo(**db, std::cout);
    return st.ok() ? 0 : fail(st);
  }
  if (*check) return run_check(db_url, check_json);
  if (*import_docs) return run_import_documents(db_url, scope, scheme, file);
  if (*serve) {
    auto db = open_migrated(db_url, pool_size);
    if (!db.ok()) return fail(db.status());
    if (!tokens.empty()) server_options.tokens_file = tokens;
    server_options.request_deadline = std::chrono::milliseconds(request_timeout_ms);
    auto server = Server::start(**db, server_options);
    if (!server.ok()) return fail(server.status());
    (*server)->handle_signals();
    spdlog::info("msg=\"serving\" url=http://{}/ db={}", server_options.listen,
                 engine_name((*db)->engine()));
    (*server)->wait();
    spdlog::info("msg=\"stopped\"");
    return 0;
  }
  return 0;
}
