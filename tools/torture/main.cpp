// onceorder-torture: runs a seeded mixed workload against two `onceorder serve` processes on
// one database while a nemesis injects faults, then proves the promises from the history and
// the database (docs/RELIABILITY.md).
//
//   onceorder-torture run --engine postgresql --profile short --bin build/onceorder
//   onceorder-torture run ... --variant max_plus_one --bin
//   build/tools/torture/onceorder-naive-max_plus_one
//                         --expect-violation documents_unique
//   onceorder-torture check --dir DIR      (the checker again, on a kept run)
//   onceorder-torture plant --dir DIR --check-bin build/onceorder
//   onceorder-torture poll ...             (the naive poller; the harness starts it itself)
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "checker.hpp"
#include "cluster.hpp"
#include "e2e/http_client.hpp"
#include "feed.hpp"
#include "history.hpp"
#include "nemesis.hpp"
#include "patroni.hpp"
#include "plant.hpp"
#include "poller.hpp"
#include "receiver.hpp"
#include "torture_paths.hpp"  // generated: ONCEORDER_PGCLUSTER, ONCEORDER_PATRONI_CLUSTER
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

// A Patroni cluster's profile: every fault of its own once a round with the servers' kill and
// pause (the receivers' faults are the other profiles' business); a round takes about 100 s.
Profile patroni_profile(const std::string& name) {
  std::vector<std::string> faults = {"kill", "pause"};
  faults.insert(faults.end(), cluster_faults().begin(), cluster_faults().end());
  if (name == "long") {
    // Two partitions of the primary in each round: a run of an hour sees ≥ 30 leader
    // changes, ≥ 10 of them from a partition (docs/RELIABILITY.md).
    faults.push_back("partition_primary");
    return {495000, 3300, 8, 150, faults, 1000, 3000, 5000, 900};
  }
  if (name == "calm") return {1500, 30, 8, 0, {}, 2000, 4000, 0, 90};
  return {18000, 120, 8, 150, faults, 1000, 3000, 1000, 120};
}

Profile profile(const std::string& name, bool postgres, bool outbox) {
  std::vector<std::string> faults = {"kill", "kill", "pause"};
  if (postgres) faults.insert(faults.end(), {"pg_restart", "failover"});
  if (outbox) faults.insert(faults.end(), {"receiver_fail", "receiver_stall", "receiver_drop"});
  if (name == "long") {
    faults.push_back("kill");  // 3 kills in each round
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
  // Seed 000 as first built: one live item per run and order, not per order.
  if (variant == "run_key")
    return "DROP INDEX schedule_items_live; CREATE UNIQUE INDEX schedule_items_run_key ON "
           "schedule_items (run_id, site_code, order_no, lot_no); ALTER TABLE production_orders "
           "DROP CONSTRAINT production_orders_pkey; ALTER TABLE events DROP CONSTRAINT "
           "events_type_key_key";
  return "";
}

// Caught: one of `expect` (comma-separated) reported a violation.
int print_report(const std::vector<CheckResult>& results, const std::string& expect,
                 const fs::path& dir) {
  std::set<std::string> expected;
  std::stringstream list(expect);
  for (std::string name; std::getline(list, name, ',');) expected.insert(name);
  bool ok = true;
  std::vector<std::string> caught_by;
  Json j = Json::array();
  for (const auto& c : results) {
    std::cout << fmt::format("{} {:<24} {} violations\n", c.violations == 0 ? "ok  " : "FAIL",
                             c.name, c.violations);
    for (const auto& s : c.samples) std::cout << "          " << s << '\n';
    for (const auto& n : c.notes) std::cout << "          note: " << n << '\n';
    ok = ok && c.violations == 0;
    if (expected.contains(c.name) && c.violations > 0) caught_by.push_back(c.name);
    j.push_back({{"check", c.name},
                 {"violations", c.violations},
                 {"samples", c.samples},
                 {"notes", c.notes}});
  }
  std::ofstream(dir / "checks.json") << j.dump(2) << '\n';
  if (!expected.empty()) {
    std::cout << (caught_by.empty()
                      ? fmt::format("torture: the broken variant was NOT caught by {}\n", expect)
                      : fmt::format("torture: the broken variant was caught by the check {}\n",
                                    fmt::join(caught_by, ", ")));
    return caught_by.empty() ? 1 : 0;
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

struct RunArgs {
  std::string engine = "sqlite", profile_name = "short", bin = "build/onceorder", variant;
  std::string dir_s, pgcluster = ONCEORDER_PGCLUSTER, expect, product_bin;
  std::string cluster = "pgcluster";  // or patroni (tools/torture/patroni-cluster)
  bool unsafe = false;                // patroni: no synchronous mode, lagging replicas
  std::uint64_t seed = 1;
  std::int64_t ops = 0;
  int seconds = 0, clients = 0, preload = -1, pace = -1, settle = -1;
  std::vector<std::string> faults;
};

void add_run_options(CLI::App* run, RunArgs& a) {
  run->add_option("--engine", a.engine, "sqlite or postgresql")
      ->check(CLI::IsMember({"sqlite", "postgresql"}));
  run->add_option("--profile", a.profile_name, "short, long or calm (no faults)")
      ->check(CLI::IsMember({"short", "long", "calm"}));
  run->add_option("--seed", a.seed, "workload and nemesis seed");
  run->add_option("--bin", a.bin, "the onceorder binary to serve with (a naive variant's too)");
  run->add_option("--check-bin", a.product_bin, "the onceorder binary for `check` (default --bin)");
  run->add_option("--variant", a.variant,
                  "a broken variant: its naive schema, or (poller) the naive outbox poller")
      ->check(CLI::IsMember({"max_plus_one", "unfenced", "reserve_loop", "run_key", "poller"}));
  run->add_option("--expect-violation", a.expect,
                  "succeed only when one of these checks (comma-separated) fails");
  run->add_option("--ops", a.ops, "operations (overrides the profile)");
  run->add_option("--seconds", a.seconds, "workload duration (overrides the profile)");
  run->add_option("--clients", a.clients, "client threads (overrides the profile)");
  run->add_option("--faults", a.faults,
                  "faults to inject (overrides the profile): kill pause pg_restart failover "
                  "receiver_fail receiver_stall receiver_drop poller_kill, or none")
      ->delimiter(',');
  run->add_option("--settle-seconds", a.settle,
                  "how long production (and the outbox) may take to settle after healing");
  run->add_option("--pace", a.pace,
                  "operations per second in all, 0 unlimited (overrides the profile)");
  run->add_option("--preload", a.preload,
                  "source orders waiting at the start (overrides the profile)");
  run->add_option("--dir", a.dir_s, "where the run keeps its files (default: a new temp dir)");
  run->add_option("--pgcluster", a.pgcluster, "the pgcluster script");
  run->add_option("--cluster", a.cluster,
                  "PostgreSQL as pgcluster (a primary and a standby, failed over by script) or "
                  "patroni (3 etcd, 3 nodes under Patroni, every member in a network namespace)")
      ->check(CLI::IsMember({"pgcluster", "patroni"}));
  run->add_flag("--unsafe", a.unsafe,
                "patroni: synchronous_mode off and the replicas lagging (the checker must catch "
                "lost writes)");
}

bool patroni(const RunArgs& a) { return a.cluster == "patroni"; }
fs::path cluster_base(const RunArgs& a, const fs::path& dir) {
  return dir / (patroni(a) ? "pc" : "pg");
}

// The database of a run, migrated, with the variant's schema and the preloaded source orders.
std::optional<Database> make_database(const RunArgs& a, const Profile& p, const fs::path& dir) {
  std::optional<Database> db;
  if (a.engine == "postgresql") {
    const fs::path base = cluster_base(a, dir);
    if (fs::exists(base))  // an earlier run's cluster in the same directory
      run_command(fmt::format("'{}' destroy '{}' >&2", a.pgcluster, base.string()));
    const std::string cmd = patroni(a) ? fmt::format("'{}' init '{}' {} >&2", a.pgcluster,
                                                     base.string(), a.unsafe ? "--unsafe" : "")
                                       : fmt::format("'{}' init '{}' {} {} >&2", a.pgcluster,
                                                     base.string(), free_port(), free_port());
    if (run_command(cmd) != 0) {
      std::cerr << "torture: the PostgreSQL cluster did not start\n";
      return std::nullopt;
    }
    db = Database::postgres(a.pgcluster, base);
  } else {
    db = Database::sqlite(dir / "torture.db");
  }
  if (run_command(fmt::format("'{}' --db '{}' migrate >&2", a.bin, db->url())) != 0) {
    std::cerr << "torture: migrate failed\n";
    return std::nullopt;
  }
  if (const std::string sql = naive_schema(a.variant); !sql.empty()) db->exec(sql);
  if (p.preload > 0)  // as the source system would write them, from outside OnceOrder
    db->exec(
        fmt::format("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
                    "{}) INSERT INTO source_orders (site_code, order_no, lot_no, quantity) "
                    "SELECT 'P', 'P-' || i, '1', 1 FROM n",
                    p.preload));
  return db;
}

// On a Patroni cluster each serve runs in its own network namespace ("NAMESPACE ADDRESS").
std::pair<std::string, std::string> serve_place(const Database& db, int i) {
  std::string out;
  run_command(fmt::format("'{}' serve-ns '{}' {}", db.script(), db.base(), i + 1), &out);
  std::istringstream in(out);
  std::string ns, address;
  in >> ns >> address;
  return {ns, address};
}

bool start_serves(const std::string& bin, const Database& db, const fs::path& dir, bool in_netns,
                  std::vector<std::unique_ptr<Serve>>& serves, Targets& targets) {
  // The token the harness's clients send by default (testing::kTestAdminToken).
  const std::string tokens = (dir / "tokens").string();
  std::ofstream(tokens) << onceorder::testing::test_tokens_text();
  fs::permissions(tokens, fs::perms::owner_read | fs::perms::owner_write);
  const std::vector<std::string> serve_args = {
      "--tokens",         tokens, "--batch-interval",      "2s",
      "--reap-interval",  "1s",   "--run-timeout",         "4s",
      "--lease",          "2s",   "--invariants-interval", "10s",
      "--pool-size",      "4",    "--delivery-timeout",    "1s",
      "--delivery-lease", "3s",   "--request-timeout-ms",  "4000"};
  for (int i = 0; i < 2; ++i) {
    serves.push_back(std::make_unique<Serve>(bin, db.url(), free_port(), serve_args,
                                             (dir / fmt::format("serve-{}.log", i)).string()));
    if (in_netns) {
      const auto [ns, address] = serve_place(db, i);
      serves.back()->place(ns, address);
      onceorder::testing::HttpClient::route(serves.back()->port(), address);
    }
    if (!serves.back()->start()) {
      std::cerr << "torture: serve " << i << " did not start (see its log in " << dir << ")\n";
      return false;
    }
    targets.ports.push_back(serves.back()->port());
  }
  return true;
}

// The outbox's side of a run: the endpoints' receivers and the feed consumer (a run of the
// product), or the naive poller and its receiver (--variant poller).
struct OutboxSide {
  std::vector<std::unique_ptr<Receiver>> receivers;
  std::unique_ptr<FeedConsumer> feed;
  std::unique_ptr<PollerProcess> poller;
  std::string poller_state;

  std::vector<Receiver*> list() const {
    std::vector<Receiver*> out;
    for (const auto& r : receivers) out.push_back(r.get());
    return out;
  }
  OutboxSpec spec() const {
    OutboxSpec s;
    for (const auto& r : receivers)
      s.receivers.push_back({r->options().name, r->options().mode, r->options().secret});
    s.feed = feed != nullptr;
    return s;
  }
};

bool start_outbox(const RunArgs& a, const Database& db, const fs::path& dir, const Targets& targets,
                  HistoryWriter& history, OutboxSide& side) {
  if (a.variant == "poller") {
    // An at-most-once-style receiver behind the poller: it acts on every POST it reads.
    side.receivers.push_back(std::make_unique<Receiver>(
        ReceiverOptions{"poller", "poller", "", std::chrono::milliseconds(1500),
                        std::chrono::milliseconds(5)},
        history));
    if (!side.receivers.back()->start()) return false;
    side.poller_state = (dir / "poller.state").string();
    side.poller = std::make_unique<PollerProcess>(
        std::vector<std::string>{fs::read_symlink("/proc/self/exe").string(), "poll", "--db",
                                 db.url(), "--port", std::to_string(side.receivers.back()->port()),
                                 "--state", side.poller_state},
        (dir / "poller.log").string());
    return side.poller->start();
  }
  if (!a.variant.empty()) return true;  // the seeds' naive designs: no outbox
  std::string address = "127.0.0.1";    // the servers in namespaces reach the harness on the bridge
  if (patroni(a)) {
    run_command(fmt::format("'{}' harness-ip '{}'", db.script(), db.base()), &address);
    while (!address.empty() && address.back() == '\n') address.pop_back();
  }
  for (const char* mode : {"at_least_once", "at_most_once"}) {
    const std::string name = std::string(mode) == "at_least_once" ? "alo" : "amo";
    ReceiverOptions ro{name, mode, "torture-secret-" + name, std::chrono::milliseconds(1500),
                       std::chrono::milliseconds(0)};
    ro.address = address;
    side.receivers.push_back(std::make_unique<Receiver>(ro, history));
    if (!side.receivers.back()->start()) return false;
  }
  if (!set_up_endpoints(targets, side.list(), history)) return false;
  side.feed = std::make_unique<FeedConsumer>(targets, history, a.seed);
  side.feed->start();
  return true;
}

// After the replays: no more batch runs (each would write a run.finished event), then the
// operator settles the outbox and the readers stop. What was left ("" when nothing).
std::string finish_outbox(OutboxSide& side, std::vector<std::unique_ptr<Serve>>& serves,
                          const Targets& targets, const Database& db, HistoryWriter& history,
                          std::chrono::seconds wait) {
  if (side.receivers.empty()) return "";
  for (auto& s : serves) {
    s->set_option("--batch-interval", "24h");
    s->terminate();
    s->start();
  }
  const std::string left =
      side.poller ? settle_poller(db, side.poller_state, wait)
                  : settle_outbox(targets, side.list(), side.feed.get(), db, history, wait);
  if (side.feed) side.feed->stop();
  if (side.poller) side.poller->kill_hard();
  return left;
}

void print_counts(const History& h, std::int64_t invoked, double elapsed, bool healed,
                  double finish_s, bool settled, const Nemesis& nemesis) {
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
}

// The workload under the nemesis, then healing, replays, the outbox settled; the checks.
int run_and_check(const RunArgs& a, const Profile& p, const fs::path& dir, Database& db) {
  std::vector<std::unique_ptr<Serve>> serves;
  Targets targets;
  if (!start_serves(a.bin, db, dir, patroni(a), serves, targets)) return 2;
  HistoryWriter history((dir / "history.jsonl").string());
  WorkloadOptions wo;
  wo.seed = a.seed;
  wo.clients = p.clients;
  wo.max_ops = p.ops;
  wo.duration = std::chrono::seconds(p.seconds);
  wo.pace = p.pace;
  OutboxSide side;
  if (!set_up(targets, wo, history) || !start_outbox(a, db, dir, targets, history, side)) {
    std::cerr << "torture: set-up failed\n";
    return 2;
  }
  Nemesis nemesis(
      {a.seed, p.faults, std::chrono::milliseconds(p.min_gap_ms),
       std::chrono::milliseconds(p.max_gap_ms), std::chrono::milliseconds(2000), patroni(a)},
      serves, db, history, {side.list(), side.poller.get()});
  std::optional<PgSampler> sampler;
  if (patroni(a)) sampler.emplace(patroni_nodes(db), history);
  if (sampler) sampler->start();
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
      [&] { return db.number(unsettled_sql(5)); }, std::chrono::seconds(p.settle));
  const double finish_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() - elapsed;
  const auto outbox_started = std::chrono::steady_clock::now();
  const std::string left = finish_outbox(side, serves, targets, db, history,
                                         std::chrono::seconds(std::max(p.settle, 60)));
  for (auto& s : serves) s->terminate();
  for (auto& r : side.receivers) r->stop();
  if (sampler) sampler->stop();

  const History h = load_history((dir / "history.jsonl").string());
  print_counts(h, invoked, elapsed, healed, finish_s, settled, nemesis);
  if (!side.receivers.empty())
    std::cout << fmt::format(
        "torture: outbox settled in {:.1f} s{}\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - outbox_started).count(),
        left.empty() ? "" : "; LEFT: " + left);
  std::vector<CheckResult> results = check(h, db, {wo.skus, a.product_bin, 5, side.spec()});
  if (patroni(a)) {
    const auto lines = read_history_lines((dir / "history.jsonl").string());
    results.push_back(check_timelines(lines, db));
    std::cout << "torture: unavailability (the longest time without an acknowledged write, from "
                 "each cluster fault's start until the cluster is healthy again)\n"
              << unavailability(lines, (dir / "unavailability.json").string());
  }
  return print_report(results, a.expect, dir);
}

int run(RunArgs a) {
  const bool postgres = a.engine == "postgresql";
  if (patroni(a) && (!postgres || !a.variant.empty())) {
    std::cerr << "torture: --cluster patroni runs the product on PostgreSQL only\n";
    return 2;
  }
  if (patroni(a) && a.pgcluster == ONCEORDER_PGCLUSTER) a.pgcluster = ONCEORDER_PATRONI_CLUSTER;
  Profile p = patroni(a) ? patroni_profile(a.profile_name)
                         : profile(a.profile_name, postgres, a.variant.empty());
  if (a.ops > 0) p.ops = a.ops;
  if (a.seconds > 0) p.seconds = a.seconds;
  if (a.clients > 0) p.clients = a.clients;
  if (a.preload >= 0) p.preload = a.preload;
  if (a.pace >= 0) p.pace = a.pace;
  if (a.settle >= 0) p.settle = a.settle;
  if (!a.faults.empty())
    p.faults = a.faults == std::vector<std::string>{"none"} ? std::vector<std::string>{} : a.faults;
  if (a.product_bin.empty()) a.product_bin = a.bin;
  a.bin = fs::absolute(a.bin);
  a.product_bin = fs::absolute(a.product_bin);
  fs::path dir = a.dir_s.empty()
                     ? fs::path(fmt::format("/tmp/onceorder-torture-{}-{}", a.engine, getpid()))
                     : fs::path(a.dir_s);
  fs::create_directories(dir);
  dir = fs::absolute(dir);
  OutboxSpec planned;  // written before the run, so that `check --dir` knows it
  if (a.variant.empty())
    planned.receivers = {{"alo", "at_least_once", "torture-secret-alo"},
                         {"amo", "at_most_once", "torture-secret-amo"}};
  if (a.variant.empty()) planned.feed = true;
  if (a.variant == "poller") planned.receivers = {{"poller", "poller", ""}};
  std::ofstream(dir / "run.json") << Json{
      {"engine", a.engine},         {"profile", a.profile_name}, {"seed", a.seed},
      {"cluster", a.cluster},       {"unsafe", a.unsafe},        {"bin", a.bin},
      {"check_bin", a.product_bin}, {"variant", a.variant},      {"expect", a.expect},
      {"outbox", planned.to_json()}}.dump(2);
  std::cout << fmt::format(
                   "torture: {} profile on {}, seed {}, {} clients, up to {} ops in {} s "
                   "(pace {}/s), {} source orders preloaded, faults [{}]{}; files in {}\n",
                   a.profile_name, a.engine, a.seed, p.clients, p.ops, p.seconds, p.pace, p.preload,
                   fmt::join(p.faults, " "), a.variant.empty() ? "" : ", variant " + a.variant,
                   dir.string())
            << std::flush;
  std::optional<Database> db = make_database(a, p, dir);
  if (!db && patroni(a))  // what init made before it failed
    run_command(fmt::format("'{}' destroy '{}' >&2", a.pgcluster, cluster_base(a, dir).string()));
  if (!db) return 2;
  int status = 2;
  try {
    status = run_and_check(a, p, dir, *db);
  } catch (const std::exception& e) {  // a database no node serves any more, say
    std::cout << "torture: the run stopped: " << e.what() << '\n';
  }
  // Namespaces and their processes never outlive a Patroni run (the logs stay).
  if (patroni(a)) {
    run_command(fmt::format("'{}' destroy '{}' >&2", a.pgcluster, cluster_base(a, dir).string()));
    return status;
  }
  // A run that failed keeps its cluster running for a look (`check --dir` runs the checker
  // again); ONCEORDER_TORTURE_KEEP=1 keeps any run's.
  if (postgres && status == 0 && std::getenv("ONCEORDER_TORTURE_KEEP") == nullptr)
    run_command(fmt::format("'{}' destroy '{}' >&2", a.pgcluster, (dir / "pg").string()));
  else if (postgres)
    std::cout << fmt::format("torture: the cluster still runs; stop it with {} destroy {}\n",
                             a.pgcluster, (dir / "pg").string());
  return status;
}

int check_again(const std::string& dir_s, const std::string& product_bin,
                const std::string& pgcluster) {
  const fs::path dir = dir_s;
  Json meta = Json::parse(std::ifstream(dir / "run.json"));
  Database db = meta["engine"] == "postgresql" ? Database::postgres(pgcluster, dir / "pg")
                                               : Database::sqlite(dir / "torture.db");
  CheckOptions co{6, product_bin.empty() ? meta.value("check_bin", "") : product_bin, 5,
                  OutboxSpec::from_json(meta.value("outbox", Json()))};
  return print_report(check(load_history(dir / "history.jsonl"), db, co), meta.value("expect", ""),
                      dir);
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"onceorder-torture: faults under a mixed workload, and a checker of the promises"};
  app.require_subcommand(1);
  RunArgs a;
  auto* run_cmd = app.add_subcommand("run", "run a profile and check it");
  add_run_options(run_cmd, a);
  auto* chk = app.add_subcommand("check", "check a kept run again");
  chk->add_option("--dir", a.dir_s, "the run's directory")->required();
  chk->add_option("--check-bin", a.product_bin, "the onceorder binary for `check`");
  chk->add_option("--pgcluster", a.pgcluster, "the pgcluster script");
  auto* pl = app.add_subcommand("plant", "plant violations into copies of a clean SQLite run");
  pl->add_option("--dir", a.dir_s, "the clean run's directory")->required();
  pl->add_option("--check-bin", a.product_bin, "the onceorder binary for `check`")->required();
  auto* win = app.add_subcommand(
      "windows", "the unavailability windows of a kept Patroni run, from its history");
  win->add_option("--dir", a.dir_s, "the run's directory")->required();
  PollerOptions po;
  auto* poll = app.add_subcommand("poll", "the naive outbox poller (started by `run`)");
  poll->add_option("--db", po.db_url, "libpq connection string")->required();
  poll->add_option("--port", po.port, "the receiver's loopback port")->required();
  poll->add_option("--state", po.state_path, "where the poller saves its last event id")
      ->required();
  CLI11_PARSE(app, argc, argv);

  if (poll->parsed()) return poll_main(po);
  if (win->parsed()) {
    const fs::path dir = a.dir_s;
    std::cout << unavailability(read_history_lines((dir / "history.jsonl").string()),
                                (dir / "unavailability.json").string());
    return 0;
  }
  if (pl->parsed()) return plant(fs::absolute(a.dir_s), fs::absolute(a.product_bin));
  if (chk->parsed()) return check_again(a.dir_s, a.product_bin, a.pgcluster);
  return run(a);
}
