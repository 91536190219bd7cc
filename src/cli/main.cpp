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

#include "cli/commands.hpp"
#include "cli/delivery.hpp"
#include "cli/demo.hpp"
#include "cli/edge.hpp"
#include "cli/options.hpp"
#include "cli/tokens.hpp"
#include "cli/transport.hpp"
#include "core/version.hpp"
#include "http/auth.hpp"
#include "onceorder/db_url.hpp"
#include "onceorder/duration.hpp"
#include "onceorder/http_server.hpp"
#include "onceorder/intake.hpp"
#include "onceorder/limits.hpp"
#include "onceorder/maintenance.hpp"
#include "onceorder/receipts.hpp"
#include "onceorder/redact.hpp"
#include "onceorder/store.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"OnceOrder: orders made once, numbers handed out once"};
  app.require_subcommand(1);
  // `onceorder migrate --db URL` as well as `onceorder --db URL migrate`.
  app.fallthrough();
  std::string db_url(kDefaultDbUrl);
  if (const char* env = std::getenv("ONCEORDER_DB"); env && *env) db_url = env;
  app.add_option("--db", db_url, cli::kDbHelp)->type_name("URL");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "debug logging");
  app.set_version_flag("--version", version_line(),
                       "print the release and the git commit, and exit");

  // Scheduling settings shared by serve and the schedule commands.
  SchedulerOptions sched;
  MaintenanceOptions maint;

  auto* serve =
      app.add_subcommand("serve", "run the HTTP server, the batch and the reaper (migrates first)");
  ServerOptions server_options;
  int pool_size = 8;
  int request_timeout_ms = 5000;
  std::string tokens;
  std::chrono::milliseconds header_timeout{10000};
  serve->add_option("--listen", server_options.listen, "host:port to listen on")
      ->capture_default_str();
  serve
      ->add_option("--allowed-hosts", server_options.allowed_hosts,
                   "host names clients call this server by, besides localhost, 127.0.0.1, [::1] "
                   "and the listen address (comma list; another Host is refused 421)")
      ->delimiter(',');
  serve
      ->add_option("--allowed-origins", server_options.allowed_origins,
                   "origins (http[s]://host[:port]) that may send changes, besides those of the "
                   "allowed hosts (comma list; another Origin is refused 403)")
      ->delimiter(',');
  auto* tokens_option = serve->add_option(
      "--tokens", tokens,
      "tokens file: one 'token role [name]' per line (default: made at first start, see "
      "--state-dir)");
  std::string state_dir;
  serve->add_option("--state-dir", state_dir,
                    "where serve makes its tokens file without --tokens: onceorder.tokens there "
                    "(default: beside an SQLite database, else $STATE_DIRECTORY or the working "
                    "directory)");
  serve
      ->add_option("--pool-size", pool_size,
                   "database connections (request workers: 4 per connection)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  serve->add_option("--request-timeout-ms", request_timeout_ms, "deadline per request")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  serve
      ->add_option("--max-connections", server_options.max_connections,
                   "most client connections held at once (fewer if the open-file limit is low)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  add_duration(serve, "--header-timeout", header_timeout, "time to send a request's header (10s)");
  add_duration(serve, "--invariants-interval", server_options.invariants_interval,
               "least time between the background invariant runs /metrics shows; at least 9x "
               "the last run (30s)");
  add_duration(serve, "--batch-interval", maint.batch_interval, "time between batch runs (4h)");
  add_duration(serve, "--reap-interval", maint.reap_interval, "time between reaper passes (60s)");
  // At least 2 s: it is renewed every half lease and given up a quarter lease early, and each
  // renewal is a database round trip that must not race its own lease.
  add_duration(serve, "--leader-lease", maint.leader_lease,
               "how long the maintenance leadership lasts unrenewed; a dead leader is replaced "
               "within it (30s, at least 2s)",
               std::chrono::seconds(2), "2s");
  add_duration(serve, "--receipt-retention", maint.receipt_retention,
               "how long an Idempotency-Key's receipt lives (30d)");
  IntakeOptions intake_options;
  intake_options.replay_memory = std::chrono::seconds(30);
  serve
      ->add_option_function<std::string>(
          "--replay-memory",
          [&intake_options](const std::string& text) {
            if (text == "off") {
              intake_options.replay_memory = std::chrono::milliseconds(0);
              return;
            }
            auto d = parse_duration(text);
            if (!d.ok()) throw CLI::ValidationError("--replay-memory", d.status().message());
            intake_options.replay_memory = *d;
          },
          "how long this process answers a replayed order from memory, without reading its "
          "receipt; off: never (30s, at most the receipt retention)")
      ->type_name("DURATION|off");
  cli::add_sched_options(
      serve, sched,
      cli::kSchedRunTimeout | cli::kSchedLease | cli::kSchedMaxAttempts | cli::kSchedWorkers);
  cli::add_transport_options(serve, server_options);
  cli::DeliveryFlags delivery_flags;
  cli::add_delivery_options(serve, delivery_flags);
  cli::add_edge_options(serve, server_options);

  auto* migrate = app.add_subcommand("migrate", "bring the schema up to date");
  store::MigrateOptions migrate_options;
  migrate_options.repair_indexes = true;
  // Names only, in the help and in the error: CLI11's enum maps print as "{full->0,…}".
  migrate
      ->add_option_function<std::string>(
          "--live-index",
          [&migrate_options](const std::string& text) {
            std::string mode = text;
            for (char& ch : mode)
              ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if (mode == "full") {
              migrate_options.live_index = store::LiveIndexMode::full;
            } else if (mode == "new-rows-only") {
              migrate_options.live_index = store::LiveIndexMode::new_rows_only;
            } else {
              throw CLI::ValidationError("--live-index",
                                         "'" + text + "' is neither full nor new-rows-only");
            }
          },
          "what the live-item index covers when it is built (new-rows-only leaves legacy "
          "duplicates alone; docs/CUTOVER.md)")
      ->type_name("full|new-rows-only");
  auto* demo = app.add_subcommand("demo", "load a small demo data set");
  auto* check = app.add_subcommand("check", "run the invariants; exit 1 when any is violated");
  bool check_json = false;
  check->add_flag("--json", check_json, "machine-readable output");

  auto* schedule = app.add_subcommand("schedule", "production scheduling");
  schedule->require_subcommand(1);
  auto* batch = schedule->add_subcommand("batch", "one batch run now, with progress");
  cli::add_sched_options(batch, sched,
                         cli::kSchedLease | cli::kSchedMaxAttempts | cli::kSchedWorkers);
  auto* reap = schedule->add_subcommand("reap", "one reaper pass");
  cli::add_sched_options(reap, sched, cli::kSchedRunTimeout);
  auto* requeue = schedule->add_subcommand(
      "requeue", "re-queue orders that reached --max-attempts (none named: list them)");
  cli::add_sched_options(requeue, sched, cli::kSchedMaxAttempts);
  std::vector<std::string> requeue_keys;
  bool requeue_dry_run = false;
  requeue->add_flag("--dry-run", requeue_dry_run, "say what would be re-queued, change nothing");
  requeue->add_option("ORDERS", requeue_keys, "SITE ORDER LOT, one triple per order");

  auto* maintenance_cmd = app.add_subcommand("maintenance", "maintenance passes, run now");
  maintenance_cmd->require_subcommand(1);
  auto* expire = maintenance_cmd->add_subcommand(
      "expire-receipts", "delete Idempotency-Key receipts older than the retention");
  std::chrono::milliseconds retention = kDefaultReceiptRetention;
  add_duration(expire, "--receipt-retention", retention, "how long a receipt lives (30d)");

  auto* legacy = app.add_subcommand("legacy", "legacy data tools");
  legacy->require_subcommand(1);
  auto* import_docs = legacy->add_subcommand("import-documents", "import legacy document numbers");
  std::string scope, scheme, file;
  bool dry_run = false;
  import_docs->add_option("--scope", scope, "document scope")->required();
  import_docs->add_option("--scheme", scheme,
                          "dec3 | hex3 | dec4 (a file with a scheme column declares it per row)");
  import_docs->add_flag("--dry-run", dry_run, "print the reconciliation report, write nothing");
  import_docs->add_option("FILE", file, "UTF-8 CSV: number[,scheme][,title]")->required();
  auto* import_items = legacy->add_subcommand("import-items", "stage legacy schedule items");
  import_items
      ->add_option("FILE", file, "UTF-8 CSV: site_code,order_no,lot_no,status,created_at[,run_id]")
      ->required();
  auto* resolve = legacy->add_subcommand(
      "resolve", "record whether in-flight legacy rows were made (needed before dedup --apply)");
  resolve->add_option("FILE", file, "UTF-8 CSV: site_code,order_no,lot_no,outcome (made|not_made)")
      ->required();
  auto* dedup = legacy->add_subcommand("dedup", "show (or --apply) the plan for duplicate items");
  bool apply = false;
  dedup->add_flag("--apply", apply, "carry the plan out and move staged rows into the live table");

  auto* token_cmd = app.add_subcommand("token", "API tokens");
  token_cmd->require_subcommand(1);
  auto* token_new = token_cmd->add_subcommand(
      "new", "print a fresh token and its tokens-file line (sha256: form)");
  std::string token_role, token_name;
  token_new->add_option("ROLE", token_role, "admin | operator | viewer | customer:<id>")
      ->required();
  token_new->add_option(
      "NAME", token_name,
      fmt::format("who the token stands for (1-{} of [A-Za-z0-9._@-])", kMaxPrincipalName));

  cli::EndpointTestFlags endpoint_flags;
  auto* endpoint_test = cli::add_endpoint_commands(app, endpoint_flags);
  cli::add_database_options(app, db_url, verbose, {token_cmd});

  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z level=%l %v");

  if (*token_new) return cli::token_new(token_role, token_name);
  if (*serve) cli::harden_process();  // before the tokens and the database password are read
  // Every server has a tokens file: the one given (`--tokens ""`, an unset variable, is an
  // error, not a default), checked before anything else happens, or the one serve makes at
  // first start once the database has opened (a mistyped --db makes no file).
  cli::ServeTokens serve_tokens;
  const bool tokens_given = *serve && tokens_option->count() > 0;
  if (tokens_given) {
    serve_tokens.path = tokens;
    auto table = http::TokenTable::load(serve_tokens.path);
    if (!table.ok()) return cli::fail(table.status());
  }
  if (*serve) {
    if (Status st = cli::check_delivery_flags(delivery_flags); !st.ok()) return cli::fail(st);
  }

  // `migrate` reports the version; `dedup` must run on a database whose last migration
  // is blocked by the very duplicates it fixes; everything else migrates first.
  const bool migrated = !*migrate && !*dedup;
  auto db = open_db(db_url, *serve ? pool_size : 8, migrated);
  if (!db.ok()) return cli::fail(db.status());
  store::Database& database = **db;

  if (*migrate) {
    auto version = store::migrate(database, migrate_options);
    if (!version.ok()) return cli::fail(version.status());
    std::cout << fmt::format("schema at version {} ({})\n", *version,
                             engine_name(database.engine()));
    return 0;
  }
  if (*demo) {
    Status st = cli::load_demo(database, std::cout);
    return st.ok() ? 0 : cli::fail(st);
  }
  if (*check) return cli::check(database, check_json);
  if (*import_docs) return cli::import_documents(database, scope, scheme, dry_run, file);
  if (*import_items) return cli::import_items(database, file);
  if (*resolve) return cli::resolve(database, file);
  if (*dedup) return cli::dedup(database, apply);
  if (*expire) return cli::expire_receipts(database, retention);
  if (*batch) return cli::schedule_batch(database, sched);
  if (*reap) return cli::schedule_reap(database, sched);
  if (*requeue) return cli::schedule_requeue(database, sched, requeue_keys, requeue_dry_run);
  if (*endpoint_test) return cli::endpoint_test(database, endpoint_flags);
  if (*serve) {
    if (!tokens_given) {
      auto found = cli::serve_tokens_file(db_url, state_dir);
      if (!found.ok()) return cli::fail(found.status());
      serve_tokens = std::move(found).value();
    }
    server_options.tokens_file = serve_tokens.path;
    server_options.request_deadline = std::chrono::milliseconds(request_timeout_ms);
    server_options.header_timeout = std::max(
        std::chrono::seconds(1), std::chrono::duration_cast<std::chrono::seconds>(header_timeout));
    Scheduler scheduler(database, sched);
    intake_options.replay_memory = std::min(intake_options.replay_memory, maint.receipt_retention);
    Intake intake(database, intake_options);
    DeliveryMetrics delivery_metrics;  // outlives the server, which shows it
    server_options.delivery_metrics = &delivery_metrics;
    // Until the server's own handler is in place (handle_signals), a SIGHUP (reload TLS)
    // must not end the process, as its default action would.
    std::signal(SIGHUP, SIG_IGN);
    auto server = Server::start(database, scheduler, intake, server_options);
    if (!server.ok()) return cli::fail(server.status());
    // Before anything else starts: a SIGTERM that arrives while the workers are set up must
    // stop the server gracefully, not kill the process.
    (*server)->handle_signals();
    Maintenance maintenance(database, scheduler, maint);
    maintenance.start();
    cli::DeliveryWorkers deliveries(database, delivery_flags, delivery_metrics);
    deliveries.start();
    spdlog::info("msg=\"serving\" url={}://{}/ db={} port={}",
                 server_options.tls_cert ? "https" : "http", server_options.listen,
                 engine_name(database.engine()), (*server)->port());
    cli::print_console_url(serve_tokens, server_options.listen, (*server)->port());
    (*server)->wait();
    deliveries.stop();  // before the database closes
    maintenance.stop();
    spdlog::info("msg=\"stopped\"");
    return 0;
  }
  return 0;
}
