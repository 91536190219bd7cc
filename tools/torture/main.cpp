// onceorder-torture: runs a seeded mixed workload against two `onceorder serve` processes on
// one database while a nemesis injects faults, then proves the promises from the history and
// the database (docs/RELIABILITY.md).
//
//   onceorder-torture run --engine postgresql --profile short --bin build/onceorder
//   onceorder-torture run ... --variant max_plus_one --bin
//   build/tools/torture/onceorder-naive-max_plus_one
//                         --expect-violation documents_unique
//   onceorder-torture check --dir DIR      (the checker again, on a kept run)
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "checker.hpp"
#include "cluster.hpp"
#include "history.hpp"
#include "nemesis.hpp"
#include "plant.hpp"
#include "torture_paths.hpp"  // generated: ONCEORDER_PGCLUSTER
#include "workload.hpp"

namespace fs = std::filesystem;
using namespace onceorder::torture;
using Json = nlohmann::json;

namespace {

struct Profile {
  std::int64_t ops;
  int seconds;
  int clients;
  int pace;  // operations per second in all
  std::vector<std::string> faults;
  int min_gap_ms, max_gap_ms;
  int preload;  // source orders waiting before the start: batch runs are busy throughout
  int settle;   // seconds production may take to settle after healing
};

Profile profile(const std::string& name, bool postgres) {
  std::vector<std::string> faults = {"kill", "kill", "pause"};
  if (postgres) faults.insert(faults.end(), {"pg_restart", "failover"});
  if (name == "long") {
    faults.push_back("kill");  // 3 kills in each round of 6 faults
    return {250000, 1800, 8, 300, faults, 2000, 6000, 20000, 900};
  }
  if (name == "calm") return {1500, 30, 8, 0, {}, 2000, 4000, 0, 90};
  return {8000, 30, 8, 300, faults, 2000, 4000, 2000, 90};  // short: the test command's profile
}

// The schema a naive design had: without the constraint that would have stopped its bug.
std::string naive_schema(const std::string& variant) {
  if (variant == "max_plus_one")
    return "ALTER TABLE documents DROP CONSTRAINT documents_pkey CASCADE";
  if (variant == "unfenced")
    return "ALTER TABLE production_orders DROP CONSTRAINT production_orders_pkey";
  return "";
}

int print_report(const std::vector<CheckResult>& results, const std::string& expect,
                 const fs::path& dir) {
  bool ok = true, expected_seen = false;
  Json j = Json::array();
  for (const auto& c : results) {
    std::cout << fmt::format("{} {:<24} {} violations\n", c.violations == 0 ? "ok  " : "FAIL",
                             c.name, c.violations);
    for (const auto& s : c.samples) std::cout << "          " << s << '\n';
    ok = ok && c.violations == 0;
    if (c.name == expect && c.violations > 0) expected_seen = true;
    j.push_back({{"check", c.name}, {"violations", c.violations}, {"samples", c.samples}});
  }
  std::ofstream(dir / "checks.json") << j.dump(2) << '\n';
  if (!expect.empty()) {
    std::cout << fmt::format("torture: the broken variant {} check {}\n",
                             expected_seen ? "was caught by the" : "was NOT caught by the", expect);
    return expected_seen ? 0 : 1;
  }
  std::cout << (ok ? "torture: every check passed\n" : "torture: CHECKS FAILED\n");
  return ok ? 0 : 1;
}

std::string unsettled_sql(int max_attempts) {
  return fmt::format(
      "SELECT count(*) FROM source_orders so WHERE so.cancelled_at IS NULL AND NOT EXISTS (SELECT "
      "1 FROM production_orders p WHERE p.site_code = so.site_code AND p.order_no = so.order_no "
      "AND p.lot_no = so.lot_no) AND (SELECT count(*) FROM schedule_items i WHERE i.site_code = "
      "so.site_code AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = "
      "'failed') < {}",
      max_attempts);
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"onceorder-torture: faults under a mixed workload, and a checker of the promises"};
  app.require_subcommand(1);
  std::string engine = "sqlite", profile_name = "short", bin = "build/onceorder", variant;
  std::string dir_s, pgcluster = ONCEORDER_PGCLUSTER, expect, product_bin;
  std::uint64_t seed = 1;
  std::int64_t ops = 0;
  int seconds = 0, clients = 0, preload = -1, pace = -1, settle = -1;
  std::vector<std::string> faults;
  auto* run = app.add_subcommand("run", "run a profile and check it");
  run->add_option("--engine", engine, "sqlite or postgresql")
      ->check(CLI::IsMember({"sqlite", "postgresql"}));
  run->add_option("--profile", profile_name, "short, long or calm (no faults)")
      ->check(CLI::IsMember({"short", "long", "calm"}));
  run->add_option("--seed", seed, "workload and nemesis seed");
  run->add_option("--bin", bin, "the onceorder binary to serve with (a naive variant's too)");
  run->add_option("--check-bin", product_bin, "the onceorder binary for `check` (default --bin)");
  run->add_option("--variant", variant, "naive schema for a broken variant")
      ->check(CLI::IsMember({"max_plus_one", "unfenced", "reserve_loop"}));
  run->add_option("--expect-violation", expect, "succeed only when this check fails");
  run->add_option("--ops", ops, "operations (overrides the profile)");
  run->add_option("--seconds", seconds, "workload duration (overrides the profile)");
  run->add_option("--clients", clients, "client threads (overrides the profile)");
  run->add_option("--faults", faults,
                  "faults to inject (overrides the profile): kill pause "
                  "pg_restart failover, or none")
      ->delimiter(',');
  run->add_option("--settle-seconds", settle,
                  "how long production may take to settle after healing");
  run->add_option("--pace", pace,
                  "operations per second in all, 0 unlimited (overrides the profile)");
  run->add_option("--preload", preload,
                  "source orders waiting at the start (overrides the profile)");
  run->add_option("--dir", dir_s, "where the run keeps its files (default: a new temp dir)");
  run->add_option("--pgcluster", pgcluster, "the pgcluster script");
  auto* chk = app.add_subcommand("check", "check a kept run again");
  chk->add_option("--dir", dir_s, "the run's directory")->required();
  chk->add_option("--check-bin", product_bin, "the onceorder binary for `check`");
  chk->add_option("--pgcluster", pgcluster, "the pgcluster script");
  auto* pl = app.add_subcommand("plant", "plant violations into copies of a clean SQLite run");
  pl->add_option("--dir", dir_s, "the clean run's directory")->required();
  pl->add_option("--check-bin", product_bin, "the onceorder binary for `check`")->required();
  CLI11_PARSE(app, argc, argv);

  if (pl->parsed()) return plant(fs::absolute(dir_s), fs::absolute(product_bin));

  if (chk->parsed()) {
    const fs::path dir = dir_s;
    Json meta = Json::parse(std::ifstream(dir / "run.json"));
    Database db = meta["engine"] == "postgresql" ? Database::postgres(pgcluster, dir / "pg")
                                                 : Database::sqlite(dir / "torture.db");
    CheckOptions co{6, product_bin.empty() ? meta.value("check_bin", "") : product_bin, 5};
    return print_report(check(load_history(dir / "history.jsonl"), db, co),
                        meta.value("expect", ""), dir);
  }

  const bool postgres = engine == "postgresql";
  Profile p = profile(profile_name, postgres);
  if (ops > 0) p.ops = ops;
  if (seconds > 0) p.seconds = seconds;
  if (clients > 0) p.clients = clients;
  if (preload >= 0) p.preload = preload;
  if (pace >= 0) p.pace = pace;
  if (settle >= 0) p.settle = settle;
  if (!faults.empty())
    p.faults = faults == std::vector<std::string>{"none"} ? std::vector<std::string>{} : faults;
  if (product_bin.empty()) product_bin = bin;
  bin = fs::absolute(bin);
  product_bin = fs::absolute(product_bin);
  fs::path dir = dir_s.empty()
                     ? fs::path(fmt::format("/tmp/onceorder-torture-{}-{}", engine, getpid()))
                     : fs::path(dir_s);
  fs::create_directories(dir);
  dir = fs::absolute(dir);
  std::ofstream(dir / "run.json")
      << Json{{"engine", engine}, {"profile", profile_name},  {"seed", seed},
              {"bin", bin},       {"check_bin", product_bin}, {"variant", variant},
              {"expect", expect}}
             .dump(2);
  std::cout << fmt::format(
                   "torture: {} profile on {}, seed {}, {} clients, up to {} ops in {} s "
                   "(pace {}/s), {} source orders preloaded, faults [{}]{}; files in {}\n",
                   profile_name, engine, seed, p.clients, p.ops, p.seconds, p.pace, p.preload,
                   fmt::join(p.faults, " "), variant.empty() ? "" : ", variant " + variant,
                   dir.string())
            << std::flush;

  std::optional<Database> db;
  if (postgres) {
    if (fs::exists(dir / "pg"))  // an earlier run's cluster in the same directory
      run_command(fmt::format("'{}' destroy '{}' >&2", pgcluster, (dir / "pg").string()));
    const std::string cmd = fmt::format("'{}' init '{}' {} {} >&2", pgcluster,
                                        (dir / "pg").string(), free_port(), free_port());
    if (run_command(cmd) != 0) {
      std::cerr << "torture: the PostgreSQL cluster did not start\n";
      return 2;
    }
    db = Database::postgres(pgcluster, dir / "pg");
  } else {
    db = Database::sqlite(dir / "torture.db");
  }
  if (run_command(fmt::format("'{}' --db '{}' migrate >&2", bin, db->url())) != 0) {
    std::cerr << "torture: migrate failed\n";
    return 2;
  }
  if (const std::string sql = naive_schema(variant); !sql.empty()) db->exec(sql);
  if (p.preload > 0)  // as the source system would write them, from outside OnceOrder
    db->exec(
        fmt::format("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
                    "{}) INSERT INTO source_orders (site_code, order_no, lot_no, quantity) "
                    "SELECT 'P', 'P-' || i, '1', 1 FROM n",
                    p.preload));

  const std::chrono::milliseconds lease{2000};
  const std::vector<std::string> serve_args = {
      "--batch-interval",      "2s",  "--reap-interval", "1s",
      "--run-timeout",         "4s",  "--lease",         "2s",
      "--invariants-interval", "10s", "--pool-size",     "4",
      "--request-timeout-ms",  "4000"};
  std::vector<std::unique_ptr<Serve>> serves;
  Targets targets;
  for (int i = 0; i < 2; ++i) {
    serves.push_back(std::make_unique<Serve>(bin, db->url(), free_port(), serve_args,
                                             (dir / fmt::format("serve-{}.log", i)).string()));
    if (!serves.back()->start()) {
      std::cerr << "torture: serve " << i << " did not start (see its log in " << dir << ")\n";
      return 2;
    }
    targets.ports.push_back(serves.back()->port());
  }

  HistoryWriter history((dir / "history.jsonl").string());
  WorkloadOptions wo;
  wo.seed = seed;
  wo.clients = p.clients;
  wo.max_ops = p.ops;
  wo.duration = std::chrono::seconds(p.seconds);
  wo.pace = p.pace;
  if (!set_up(targets, wo, history)) {
    std::cerr << "torture: set-up failed\n";
    return 2;
  }
  Nemesis nemesis({seed, p.faults, std::chrono::milliseconds(p.min_gap_ms),
                   std::chrono::milliseconds(p.max_gap_ms), lease},
                  serves, *db, history);
  std::thread nemesis_thread([&] { nemesis.run(); });
  std::atomic<std::int64_t> next_id{0};
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t invoked = run_workload(targets, wo, history, next_id);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  nemesis.stop();
  nemesis_thread.join();
  const bool healed = nemesis.heal();
  const bool settled = finish(
      targets, (dir / "history.jsonl").string(), history, next_id,
      [&] { return db->number(unsettled_sql(5)); }, std::chrono::seconds(p.settle));
  const double finish_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() - elapsed;
  for (auto& s : serves) s->terminate();

  const History h = load_history((dir / "history.jsonl").string());
  std::map<std::string, std::map<std::string, int>> counts;
  for (const Op& op : h.ops)
    if (op.id >= 0 && !op.final_replay) ++counts[op.type][outcome_name(op.outcome)];
  std::cout << fmt::format(
      "torture: {} operations in {:.1f} s ({:.0f}/s); healed: {}; replays and production "
      "settled in {:.1f} s: {}\n",
      invoked, elapsed, invoked / elapsed, healed, finish_s, settled);
  for (const auto& [type, by] : counts) {
    std::cout << fmt::format("  {:<14}", type);
    for (const auto& [o, n] : by) std::cout << fmt::format(" {} {}", o, n);
    std::cout << '\n';
  }
  std::cout << "  faults:";
  for (const auto& [f, n] : nemesis.counts()) std::cout << fmt::format(" {} {}", f, n);
  std::cout << '\n' << std::flush;

  CheckOptions co{wo.skus, product_bin, 5};
  const int status = print_report(check(h, *db, co), expect, dir);
  // A run that failed keeps its cluster running for a look (`check --dir` runs the checker
  // again); ONCEORDER_TORTURE_KEEP=1 keeps any run's.
  if (postgres && status == 0 && std::getenv("ONCEORDER_TORTURE_KEEP") == nullptr)
    run_command(fmt::format("'{}' destroy '{}' >&2", pgcluster, (dir / "pg").string()));
  else if (postgres)
    std::cout << fmt::format("torture: the cluster still runs; stop it with {} destroy {}\n",
                             pgcluster, (dir / "pg").string());
  return status;
}
