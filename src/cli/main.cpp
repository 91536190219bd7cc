// `onceorder` — the command line (API.md "Command line"). Each subcommand opens the
// database named by --db / ONCEORDER_DB and does one job; exit 0 on success, 1 when `check`
// finds violations, 2 on any error (one clear message on stderr).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <csignal>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "cli/delivery.hpp"
#include "cli/demo.hpp"
#include "cli/edge.hpp"
#include "cli/options.hpp"
#include "cli/tokens.hpp"
#include "cli/transport.hpp"
#include "core/version.hpp"
#include "http/auth.hpp"
#include "onceorder/core/db_url.hpp"
#include "onceorder/core/duration.hpp"
#include "onceorder/core/limits.hpp"
#include "onceorder/core/redact.hpp"
#include "onceorder/http/http_server.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/maintenance.hpp"
#include "onceorder/service/receipts.hpp"
#include "onceorder/store/store.hpp"

namespace {

using namespace onceorder;

Result<std::unique_ptr<store::Database>> open_db(const std::string& url, int pool_size,
                                                 bool migrated) {
  OO_ASSIGN_OR_RETURN(auto parsed, parse_db_url(url));
  store::DatabaseOptions options;
  options.pool_size = pool_size;
  auto db = store::Database::open(parsed, options);
  // Never the URL itself: it may hold a password, and libpq's message may quote it.
  if (!db.ok()) {
    return Status(db.status().code(), redact_db_message(db.status().message(), url) + " (--db " +
                                          redact_db_url(url) + ")");
  }
  if (migrated) {
    auto version = store::migrate(**db);
    if (!version.ok()) return version.status();
    spdlog::debug("schema at version {}", *version);
  }
  return db;
}

using cli::add_duration;

// Every subcommand, and the values its options are read into. Built once in main; CLI11 holds
// pointers into it, so it never moves.
struct Commands {
  CLI::App app{"OnceOrder: orders made once, numbers handed out once"};
  std::string db_url{kDefaultDbUrl};
  bool verbose = false;
  // Scheduling settings shared by serve and the schedule commands.
  SchedulerOptions sched;
  MaintenanceOptions maint;

  CLI::App* serve = nullptr;
  ServerOptions server_options;
  int pool_size = 8;
  int request_timeout_ms = 5000;
  std::string tokens;
  CLI::Option* tokens_option = nullptr;
  std::string state_dir;
  std::chrono::milliseconds header_timeout{10000};
  IntakeOptions intake_options;
  cli::DeliveryFlags delivery_flags;

  CLI::App* migrate = nullptr;
  store::MigrateOptions migrate_options;
  CLI::App* demo = nullptr;
  CLI::App* check = nullptr;
  bool check_json = false;

  CLI::App* batch = nullptr;
  CLI::App* reap = nullptr;
  CLI::App* requeue = nullptr;
  std::vector<std::string> requeue_keys;
  bool requeue_dry_run = false;
  CLI::App* expire = nullptr;
  std::chrono::milliseconds retention = kDefaultReceiptRetention;

  CLI::App* import_docs = nullptr;
  CLI::App* import_items = nullptr;
  CLI::App* resolve = nullptr;
  CLI::App* dedup = nullptr;
  std::string scope, scheme, file;
  bool dry_run = false;
  bool apply = false;

  CLI::App* token_cmd = nullptr;
  CLI::App* token_new = nullptr;
  std::string token_role, token_name;
  cli::EndpointTestFlags endpoint_flags;
  CLI::App* endpoint_test = nullptr;
};

// serve's listener, tokens and capacity.
void add_serve_listener_options(Commands& c) {
  CLI::App* serve = c.serve;
  serve->add_option("--listen", c.server_options.listen, "host:port to listen on")
      ->capture_default_str();
  serve
      ->add_option("--allowed-hosts", c.server_options.allowed_hosts,
                   "host names clients call this server by, besides localhost, 127.0.0.1, [::1] "
                   "and the listen address (comma list; another Host is refused 421)")
      ->delimiter(',');
  serve
      ->add_option("--allowed-origins", c.server_options.allowed_origins,
                   "origins (http[s]://host[:port]) that may send changes, besides those of the "
                   "allowed hosts (comma list; another Origin is refused 403)")
      ->delimiter(',');
  c.tokens_option = serve->add_option(
      "--tokens", c.tokens,
      "tokens file: one 'token role [name]' per line (default: made at first start, see "
      "--state-dir)");
  serve->add_option("--state-dir", c.state_dir,
                    "where serve makes its tokens file without --tokens: onceorder.tokens there "
                    "(default: beside an SQLite database, else $STATE_DIRECTORY or the working "
                    "directory)");
  serve
      ->add_option("--pool-size", c.pool_size,
                   "database connections (request workers: 4 per connection)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  serve->add_option("--request-timeout-ms", c.request_timeout_ms, "deadline per request")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  serve
      ->add_option("--max-connections", c.server_options.max_connections,
                   "most client connections held at once (fewer if the open-file limit is low)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
}

// serve's timings: requests, the background passes and what this process remembers.
void add_serve_timing_options(Commands& c) {
  CLI::App* serve = c.serve;
  add_duration(serve, "--header-timeout", c.header_timeout,
               "time to send a request's header (10s)");
  add_duration(serve, "--invariants-interval", c.server_options.invariants_interval,
               "least time between the background invariant runs /metrics shows; at least 9x "
               "the last run (30s)");
  add_duration(serve, "--batch-interval", c.maint.batch_interval, "time between batch runs (4h)");
  add_duration(serve, "--reap-interval", c.maint.reap_interval, "time between reaper passes (60s)");
  // At least 2 s: it is renewed every half lease and given up a quarter lease early, and each
  // renewal is a database round trip that must not race its own lease.
  add_duration(serve, "--leader-lease", c.maint.leader_lease,
               "how long the maintenance leadership lasts unrenewed; a dead leader is replaced "
               "within it (30s, at least 2s)",
               std::chrono::seconds(2), "2s");
  add_duration(serve, "--receipt-retention", c.maint.receipt_retention,
               "how long an Idempotency-Key's receipt lives (30d)");
  c.intake_options.replay_memory = std::chrono::seconds(30);
  serve
      ->add_option_function<std::string>(
          "--replay-memory",
          [&c](const std::string& text) {
            if (text == "off") {
              c.intake_options.replay_memory = std::chrono::milliseconds(0);
              return;
            }
            auto d = parse_duration(text);
            if (!d.ok()) throw CLI::ValidationError("--replay-memory", d.status().message());
            c.intake_options.replay_memory = *d;
          },
          "how long this process answers a replayed order from memory, without reading its "
          "receipt; off: never (30s, at most the receipt retention)")
      ->type_name("DURATION|off");
}

void add_serve(Commands& c) {
  c.serve = c.app.add_subcommand("serve",
                                 "run the HTTP server, the batch and the reaper (migrates first)");
  add_serve_listener_options(c);
  add_serve_timing_options(c);
  cli::add_sched_options(
      c.serve, c.sched,
      cli::kSchedRunTimeout | cli::kSchedLease | cli::kSchedMaxAttempts | cli::kSchedWorkers);
  cli::add_transport_options(c.serve, c.server_options);
  cli::add_delivery_options(c.serve, c.delivery_flags);
  cli::add_edge_options(c.serve, c.server_options);
}

void add_migrate(Commands& c) {
  c.migrate = c.app.add_subcommand("migrate", "bring the schema up to date");
  c.migrate_options.repair_indexes = true;
  // Names only, in the help and in the error: CLI11's enum maps print as "{full->0,…}".
  c.migrate
      ->add_option_function<std::string>(
          "--live-index",
          [&c](const std::string& text) {
            std::string mode = text;
            for (char& ch : mode)
              ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if (mode == "full") {
              c.migrate_options.live_index = store::LiveIndexMode::full;
            } else if (mode == "new-rows-only") {
              c.migrate_options.live_index = store::LiveIndexMode::new_rows_only;
            } else {
              throw CLI::ValidationError("--live-index",
                                         "'" + text + "' is neither full nor new-rows-only");
            }
          },
          "what the live-item index covers when it is built (new-rows-only leaves legacy "
          "duplicates alone; docs/CUTOVER.md)")
      ->type_name("full|new-rows-only");
  c.demo = c.app.add_subcommand("demo", "load a small demo data set");
  c.check = c.app.add_subcommand("check", "run the invariants; exit 1 when any is violated");
  c.check->add_flag("--json", c.check_json, "machine-readable output");
}

void add_schedule_and_maintenance(Commands& c) {
  auto* schedule = c.app.add_subcommand("schedule", "production scheduling");
  schedule->require_subcommand(1);
  c.batch = schedule->add_subcommand("batch", "one batch run now, with progress");
  cli::add_sched_options(c.batch, c.sched,
                         cli::kSchedLease | cli::kSchedMaxAttempts | cli::kSchedWorkers);
  c.reap = schedule->add_subcommand("reap", "one reaper pass");
  cli::add_sched_options(c.reap, c.sched, cli::kSchedRunTimeout);
  c.requeue = schedule->add_subcommand(
      "requeue", "re-queue orders that reached --max-attempts (none named: list them)");
  cli::add_sched_options(c.requeue, c.sched, cli::kSchedMaxAttempts);
  c.requeue->add_flag("--dry-run", c.requeue_dry_run,
                      "say what would be re-queued, change nothing");
  c.requeue->add_option("ORDERS", c.requeue_keys, "SITE ORDER LOT, one triple per order");

  auto* maintenance_cmd = c.app.add_subcommand("maintenance", "maintenance passes, run now");
  maintenance_cmd->require_subcommand(1);
  c.expire = maintenance_cmd->add_subcommand(
      "expire-receipts", "delete Idempotency-Key receipts older than the retention");
  add_duration(c.expire, "--receipt-retention", c.retention, "how long a receipt lives (30d)");
}

void add_legacy(Commands& c) {
  auto* legacy = c.app.add_subcommand("legacy", "legacy data tools");
  legacy->require_subcommand(1);
  c.import_docs = legacy->add_subcommand("import-documents", "import legacy document numbers");
  c.import_docs->add_option("--scope", c.scope, "document scope")->required();
  c.import_docs->add_option("--scheme", c.scheme,
                            "dec3 | hex3 | dec4 (a file with a scheme column declares it per row)");
  c.import_docs->add_flag("--dry-run", c.dry_run, "print the reconciliation report, write nothing");
  c.import_docs->add_option("FILE", c.file, "UTF-8 CSV: number[,scheme][,title]")->required();
  c.import_items = legacy->add_subcommand("import-items", "stage legacy schedule items");
  c.import_items
      ->add_option("FILE", c.file,
                   "UTF-8 CSV: site_code,order_no,lot_no,status,created_at[,run_id]")
      ->required();
  c.resolve = legacy->add_subcommand(
      "resolve", "record whether in-flight legacy rows were made (needed before dedup --apply)");
  c.resolve
      ->add_option("FILE", c.file, "UTF-8 CSV: site_code,order_no,lot_no,outcome (made|not_made)")
      ->required();
  c.dedup = legacy->add_subcommand("dedup", "show (or --apply) the plan for duplicate items");
  c.dedup->add_flag("--apply", c.apply,
                    "carry the plan out and move staged rows into the live table");
}

void add_token_and_endpoint(Commands& c) {
  c.token_cmd = c.app.add_subcommand("token", "API tokens");
  c.token_cmd->require_subcommand(1);
  c.token_new = c.token_cmd->add_subcommand(
      "new", "print a fresh token and its tokens-file line (sha256: form)");
  c.token_new->add_option("ROLE", c.token_role, "admin | operator | viewer | customer:<id>")
      ->required();
  c.token_new->add_option(
      "NAME", c.token_name,
      fmt::format("who the token stands for (1-{} of [A-Za-z0-9._@-])", kMaxPrincipalName));
  c.endpoint_test = cli::add_endpoint_commands(c.app, c.endpoint_flags);
}

void define(Commands& c) {
  c.app.require_subcommand(1);
  // `onceorder migrate --db URL` as well as `onceorder --db URL migrate`.
  c.app.fallthrough();
  if (const char* env = std::getenv("ONCEORDER_DB"); env && *env) c.db_url = env;
  c.app.add_option("--db", c.db_url, cli::kDbHelp)->type_name("URL");
  c.app.add_flag("-v,--verbose", c.verbose, "debug logging");
  c.app.set_version_flag("--version", version_line(),
                         "print the release and the git commit, and exit");
  add_serve(c);
  add_migrate(c);
  add_schedule_and_maintenance(c);
  add_legacy(c);
  add_token_and_endpoint(c);
  cli::add_database_options(c.app, c.db_url, c.verbose, {c.token_cmd});
}

// Runs the server, the maintenance passes and the delivery workers until a signal stops them.
int serve(Commands& c, store::Database& database, cli::ServeTokens serve_tokens) {
  ServerOptions& options = c.server_options;
  options.tokens_file = serve_tokens.path;
  options.request_deadline = std::chrono::milliseconds(c.request_timeout_ms);
  options.header_timeout = std::max(
      std::chrono::seconds(1), std::chrono::duration_cast<std::chrono::seconds>(c.header_timeout));
  Scheduler scheduler(database, c.sched);
  c.intake_options.replay_memory =
      std::min(c.intake_options.replay_memory, c.maint.receipt_retention);
  Intake intake(database, c.intake_options);
  DeliveryMetrics delivery_metrics;  // outlives the server, which shows it
  options.delivery_metrics = &delivery_metrics;
  // Until the server's own handler is in place (handle_signals), a SIGHUP (reload TLS)
  // must not end the process, as its default action would.
  std::signal(SIGHUP, SIG_IGN);
  auto server = Server::start(database, scheduler, intake, options);
  if (!server.ok()) return cli::fail(server.status());
  // Before anything else starts: a SIGTERM that arrives while the workers are set up must
  // stop the server gracefully, not kill the process.
  (*server)->handle_signals();
  Maintenance maintenance(database, scheduler, c.maint);
  maintenance.start();
  cli::DeliveryWorkers deliveries(database, c.delivery_flags, delivery_metrics);
  deliveries.start();
  spdlog::info("msg=\"serving\" url={}://{}/ db={} port={}", options.tls_cert ? "https" : "http",
               options.listen, engine_name(database.engine()), (*server)->port());
  cli::print_console_url(serve_tokens, options.listen, (*server)->port());
  (*server)->wait();
  deliveries.stop();  // before the database closes
  maintenance.stop();
  spdlog::info("msg=\"stopped\"");
  return 0;
}

// The one subcommand given, on the open database; serve's tokens file is `serve_tokens` when
// --tokens named it.
int run(Commands& c, store::Database& database, std::optional<cli::ServeTokens> serve_tokens) {
  if (*c.migrate) {
    auto version = store::migrate(database, c.migrate_options);
    if (!version.ok()) return cli::fail(version.status());
    std::cout << fmt::format("schema at version {} ({})\n", *version,
                             engine_name(database.engine()));
    return 0;
  }
  if (*c.demo) {
    Status st = cli::load_demo(database, std::cout);
    return st.ok() ? 0 : cli::fail(st);
  }
  if (*c.check) return cli::check(database, c.check_json);
  if (*c.import_docs) return cli::import_documents(database, c.scope, c.scheme, c.dry_run, c.file);
  if (*c.import_items) return cli::import_items(database, c.file);
  if (*c.resolve) return cli::resolve(database, c.file);
  if (*c.dedup) return cli::dedup(database, c.apply);
  if (*c.expire) return cli::expire_receipts(database, c.retention);
  if (*c.batch) return cli::schedule_batch(database, c.sched);
  if (*c.reap) return cli::schedule_reap(database, c.sched);
  if (*c.requeue) {
    return cli::schedule_requeue(database, c.sched, c.requeue_keys, c.requeue_dry_run);
  }
  if (*c.endpoint_test) return cli::endpoint_test(database, c.endpoint_flags);
  if (*c.serve) {
    if (!serve_tokens) {
      auto found = cli::serve_tokens_file(c.db_url, c.state_dir);
      if (!found.ok()) return cli::fail(found.status());
      serve_tokens = std::move(found).value();
    }
    return serve(c, database, std::move(*serve_tokens));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Commands c;
  define(c);
  CLI11_PARSE(c.app, argc, argv);
  spdlog::set_level(c.verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z level=%l %v");

  if (*c.token_new) return cli::token_new(c.token_role, c.token_name);
  if (*c.serve) cli::harden_process();  // before the tokens and the database password are read
  // Every server has a tokens file: the one given (`--tokens ""`, an unset variable, is an
  // error, not a default), checked before anything else happens, or the one serve makes at
  // first start once the database has opened (a mistyped --db makes no file).
  std::optional<cli::ServeTokens> serve_tokens;
  if (*c.serve && c.tokens_option->count() > 0) {
    serve_tokens.emplace().path = c.tokens;
    auto table = http::TokenTable::load(serve_tokens->path);
    if (!table.ok()) return cli::fail(table.status());
  }
  if (*c.serve) {
    if (Status st = cli::check_delivery_flags(c.delivery_flags); !st.ok()) return cli::fail(st);
  }

  // `migrate` reports the version; `dedup` must run on a database whose last migration
  // is blocked by the very duplicates it fixes; everything else migrates first.
  const bool migrated = !*c.migrate && !*c.dedup;
  auto db = open_db(c.db_url, *c.serve ? c.pool_size : 8, migrated);
  if (!db.ok()) return cli::fail(db.status());
  return run(c, **db, std::move(serve_tokens));
}
