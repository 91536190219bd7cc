// What an operator installs and watches: the business counters of a real `serve` after known
// traffic (a delivery to a local receiver and a named consumer's lag among them), its /metrics
// text through `promtool check metrics`, an alert (with a runbook entry) for every invariant
// the binary reports, and a man page naming every subcommand and option of
// `onceorder --help`. Runs the built binary (ONCEORDER_BIN); promtool comes from Debian's
// prometheus package (scripts/bootstrap).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e/http_fixture.hpp"
#include "e2e/serve_process.hpp"
#include "e2e/webhook_receiver.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

struct OpsCommand {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

OpsCommand ops_shell(const std::string& command) {
  OpsCommand r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string ops_read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every sample of a scrape by its series text (`name{labels}`), e.g.
// `onceorder_orders_total{outcome="placed"}` → 1.
std::map<std::string, double> ops_samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(getpid()) + "-" +
           std::to_string(std::chrono::steady_clock::now().time_since_epoch().count())))
      .string();
}

class OpsMetricsTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override { db_ = std::make_unique<TestDb>(GetParam()); }
  std::unique_ptr<TestDb> db_;
};

TEST_P(OpsMetricsTest, BusinessCountersMoveByTheTrafficAndPromtoolAcceptsTheText) {
  // Invariants checked often, so that their series are there soon after start.
  ServeProcess serve(db_->url(), {"--invariants-interval", "1s"});
  const std::uint16_t port = serve.port();
  ASSERT_NE(port, 0) << serve.output();
  HttpClient http(port, 10s);
  const auto before = ops_samples(http.get("/metrics").body);
  // An endpoint of placements on a receiver that takes everything: the one order below is
  // delivered once.
  WebhookReceiver receiver;
  const auto hook =
      http.put("/v1/endpoints/hook", nlohmann::json{{"url", receiver.url()},
                                                    {"secret", "ops-metrics-secret-0123"},
                                                    {"types", {"order.placed"}}}
                                         .dump());
  ASSERT_EQ(hook.status, 201) << hook.body;

  const std::string cart = R"({"customer_id": 7, "warehouse_id": 1, "lines": [{"sku_id": 101,
                               "quantity": 2}]})";
  const std::string big = R"({"customer_id": 7, "warehouse_id": 1, "lines": [{"sku_id": 101,
                              "quantity": 5}]})";
  ASSERT_EQ(http.put("/v1/warehouses/1/skus/101", R"({"price_cents": 100, "available": 3})").status,
            201);
  EXPECT_EQ(http.post("/v1/orders", cart, {{"Idempotency-Key", "m-1"}}).status, 201);
  EXPECT_EQ(http.post("/v1/orders", big, {{"Idempotency-Key", "m-2"}}).status, 409);
  const auto replay = http.post("/v1/orders", cart, {{"Idempotency-Key", "m-1"}});
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(http.post("/v1/orders", big, {{"Idempotency-Key", "m-2"}}).status, 409);  // replay
  EXPECT_EQ(http.post("/v1/orders", big, {{"Idempotency-Key", "m-1"}}).status, 422);  // reused
  EXPECT_EQ(
      http.post("/v1/scopes/M/documents", R"({"title": "a"})", {{"Idempotency-Key", "d"}}).status,
      201);
  EXPECT_EQ(
      http.post("/v1/scopes/M/documents", R"({"title": "a"})", {{"Idempotency-Key", "d"}}).status,
      201);
  EXPECT_EQ(http.post("/v1/scopes/M/documents", R"({"title": "b"})").status, 201);
  EXPECT_EQ(http.put("/v1/scopes/N", R"({"width": 1, "radix": 10, "max": 1})").status, 201);
  EXPECT_EQ(http.post("/v1/scopes/N/documents", R"({"title": "n1"})").status, 201);
  EXPECT_EQ(http.post("/v1/scopes/N/documents", R"({"title": "n2"})").status, 409);  // exhausted
  // The placed order's one line is one source order: the run produces one item.
  const auto run = http.post("/v1/schedule/runs", "{}");
  ASSERT_EQ(run.status, 201) << run.body;
  EXPECT_EQ(run.json()["counts"]["success"], 1) << run.body;

  // A reader that starts at the beginning: every event of the traffic is behind it.
  ASSERT_EQ(http.put("/v1/consumers/erp", R"({"after": "0"})").status, 201);
  EXPECT_TRUE(receiver.wait_for(1, 10s)) << serve.output();

  // The invariant series come from the background run, the outbox's gauges from the
  // monitor's own (every 5 s): wait for both after the traffic and the delivery.
  std::string text;
  std::map<std::string, double> after;
  const std::string hook_pending = R"(onceorder_deliveries_pending{endpoint="hook"})";
  // The worker counts a delivery once its outcome is recorded, a moment after the receiver
  // has the request.
  const std::string delivered = R"(onceorder_deliveries_total{outcome="delivered"})";
  const double delivered_before = before.contains(delivered) ? before.at(delivered) : 0.0;
  for (int i = 0; i < 200; ++i) {
    text = http.get("/metrics").body;
    after = ops_samples(text);
    if (after.contains(R"(onceorder_invariant_violations{id="I1"})") &&
        after.contains(R"(onceorder_consumer_lag_events{consumer="erp"})") &&
        after.contains(hook_pending) && after[hook_pending] == 0 && after.contains(delivered) &&
        after[delivered] > delivered_before)
      break;
    std::this_thread::sleep_for(100ms);
  }
  auto moved = [&](const std::string& series) {
    EXPECT_TRUE(after.contains(series)) << series << " missing from\n" << text;
    return after[series] - (before.contains(series) ? before.at(series) : 0.0);
  };
  EXPECT_EQ(moved(R"(onceorder_orders_total{outcome="placed"})"), 1);
  EXPECT_EQ(moved(R"(onceorder_orders_total{outcome="out_of_stock"})"), 1);
  EXPECT_EQ(moved(R"(onceorder_orders_total{outcome="replayed"})"), 2);
  EXPECT_EQ(moved(R"(onceorder_orders_total{outcome="refused"})"), 1);
  EXPECT_EQ(moved(R"(onceorder_orders_total{outcome="busy"})"), 0);
  EXPECT_EQ(moved(R"(onceorder_documents_total{outcome="issued"})"), 3);
  EXPECT_EQ(moved(R"(onceorder_documents_total{outcome="replayed"})"), 1);
  EXPECT_EQ(moved(R"(onceorder_documents_total{outcome="exhausted"})"), 1);
  EXPECT_EQ(moved("onceorder_items_produced_total"), 1);
  EXPECT_EQ(moved("onceorder_items_failed_total"), 0);
  EXPECT_EQ(moved(R"(onceorder_runs_total{outcome="done"})"), 1);
  EXPECT_EQ(moved("onceorder_run_duration_seconds_count"), 1);
  EXPECT_EQ(moved(R"(onceorder_run_duration_seconds_bucket{le="+Inf"})"), 1);
  EXPECT_GE(moved("onceorder_claim_batch_duration_seconds_count"), 1);
  // Placements and numbers reach their combiner when they are valid: 5 and 6 runs at most.
  EXPECT_GE(moved("onceorder_order_batch_duration_seconds_count"), 1);
  EXPECT_LE(moved("onceorder_order_batch_duration_seconds_count"), 5);
  EXPECT_EQ(moved("onceorder_order_batch_duration_seconds_count"),
            moved("onceorder_order_batch_size_count"));
  // One request at a time: no cart was ever in flight beside another.
  EXPECT_EQ(moved("onceorder_order_lane_collisions_total"), 0);
  EXPECT_EQ(moved("onceorder_order_lane_crowded_total"), 0);
  EXPECT_EQ(moved("onceorder_order_held_back_total"), 0);
  EXPECT_EQ(moved("onceorder_order_ran_alone_total"), 0);
  EXPECT_EQ(moved("onceorder_order_decided_ahead_total"), 0);  // lone placements only
  EXPECT_EQ(moved("onceorder_order_decided_ahead_missed_total"), 0);
  EXPECT_GE(moved("onceorder_numbering_batch_duration_seconds_count"), 1);
  EXPECT_LE(moved("onceorder_numbering_batch_duration_seconds_count"), 6);
  EXPECT_GE(moved("onceorder_tx_total"), 10);
  EXPECT_EQ(moved("onceorder_http_busy_total"), 0);
  EXPECT_EQ(moved("onceorder_reaper_dead_runs_total"), 0);
  EXPECT_EQ(moved("onceorder_reaper_expired_leases_total"), 0);
  // The delivery, as the worker counted it and as the database shows it.
  EXPECT_EQ(receiver.received().size(), 1u);
  EXPECT_EQ(moved(R"(onceorder_deliveries_total{outcome="delivered"})"), 1);
  EXPECT_EQ(moved(R"(onceorder_deliveries_total{outcome="retried"})"), 0);
  EXPECT_EQ(moved(R"(onceorder_deliveries_total{outcome="dead"})"), 0);
  EXPECT_EQ(moved("onceorder_delivery_latency_seconds_count"), 1);
  EXPECT_EQ(moved(R"(onceorder_delivery_latency_seconds_bucket{le="+Inf"})"), 1);
  EXPECT_EQ(moved("onceorder_delivery_errors_total"), 0);
  EXPECT_EQ(moved(hook_pending), 0);
  EXPECT_EQ(moved(R"(onceorder_deliveries_dead{endpoint="hook"})"), 0);
  EXPECT_EQ(moved(R"(onceorder_deliveries_in_doubt{endpoint="hook"})"), 0);
  EXPECT_EQ(moved(R"(onceorder_delivery_lag_seconds{endpoint="hook"})"), 0);
  // Placed, three numbers issued, one run finished, one production order with its number.
  EXPECT_GE(moved(R"(onceorder_consumer_lag_events{consumer="erp"})"), 5);
  EXPECT_GE(moved(R"(onceorder_consumer_lag_seconds{consumer="erp"})"), 0);
  EXPECT_GE(moved("onceorder_feed_horizon_age_seconds"), 0);

  // One violation series per invariant the server checks, each at zero after this traffic.
  const auto invariants = http.get("/v1/invariants").json();
  ASSERT_FALSE(invariants["checks"].empty());
  for (const auto& check : invariants["checks"]) {
    const std::string series =
        "onceorder_invariant_violations{id=\"" + check["id"].get<std::string>() + "\"}";
    ASSERT_TRUE(after.contains(series)) << series << " missing from\n" << text;
    EXPECT_EQ(after[series], 0) << series;
  }

  // promtool reads the exposition format strictly and lints names, types and help texts.
  const std::string file = tmp_path("onceorder-metrics");
  std::ofstream(file) << text;
  const auto promtool = ops_shell("promtool check metrics < " + file);
  std::filesystem::remove(file);
  EXPECT_EQ(promtool.exit_code, 0)
      << "promtool (Debian package prometheus; scripts/bootstrap) said:\n"
      << promtool.output;
  EXPECT_EQ(promtool.output, "") << "promtool check metrics reported problems";
}

INSTANTIATE_TEST_SUITE_P(Engines, OpsMetricsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

const std::filesystem::path kSource = ONCEORDER_SOURCE_DIR;

struct OpsAlert {
  std::string name;
  std::string expr;
  std::string runbook_url;
};

// The rules file's alerts, read line by line: `- alert:`, its `expr:` (one line, or the
// folded lines under `expr: >`) and its `runbook_url:`. promtool checks the YAML itself.
std::vector<OpsAlert> ops_alerts(const std::string& yaml) {
  std::vector<OpsAlert> out;
  static const std::regex kAlert(R"(^\s*- alert:\s*(\S+)\s*$)");
  static const std::regex kExpr(R"(^\s*expr:\s*(.*)$)");
  static const std::regex kRunbook(R"re(^\s*runbook_url:\s*"?([^"]*)"?\s*$)re");
  std::istringstream in(yaml);
  std::string line;
  bool in_expr = false;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, kAlert)) {
      out.push_back({m[1].str(), "", ""});
      in_expr = false;
    } else if (out.empty()) {
      continue;
    } else if (std::regex_match(line, m, kExpr)) {
      out.back().expr = m[1].str() == ">" ? "" : m[1].str();
      in_expr = m[1].str() == ">";
    } else if (std::regex_match(line, m, kRunbook)) {
      out.back().runbook_url = m[1].str();
      in_expr = false;
    } else if (in_expr && line.find(':') == std::string::npos) {
      out.back().expr += line;
    } else {
      in_expr = false;
    }
  }
  return out;
}

std::string ops_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TEST(OpsAlertsTest, EveryInvariantHasAnAlertAndEveryAlertARunbookEntry) {
  // The invariants the binary checks, from the binary: a new one fails here until it has an
  // alert and a runbook entry.
  const std::string db = tmp_path("onceorder-alerts") + ".db";
  const auto check = ops_shell(onceorder_bin() + " --db sqlite:" + db + " check --json");
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");
  ASSERT_EQ(check.exit_code, 0) << check.output;
  const auto report = nlohmann::json::parse(check.output.substr(check.output.find('{')));
  std::vector<std::string> ids;
  for (const auto& c : report["checks"]) ids.push_back(c["id"].get<std::string>());
  ASSERT_GE(ids.size(), 15u);

  const auto alerts = ops_alerts(ops_read(kSource / "deploy/prometheus/onceorder-alerts.yml"));
  ASSERT_FALSE(alerts.empty());
  for (const std::string& id : ids) {
    const std::string series = "onceorder_invariant_violations{id=\"" + id + "\"}";
    bool found = false;
    for (const auto& a : alerts) found = found || a.expr.find(series) != std::string::npos;
    EXPECT_TRUE(found) << "no alert watches " << series;
  }

  // Each alert's runbook_url names its own entry in docs/RUNBOOK.md, which says what it
  // means, how to look and what to do.
  const std::string runbook = ops_read(kSource / "docs/RUNBOOK.md");
  std::set<std::string> names;
  for (const auto& a : alerts) {
    EXPECT_TRUE(names.insert(a.name).second) << "two alerts named " << a.name;
    EXPECT_FALSE(a.expr.empty()) << a.name;
    EXPECT_EQ(a.runbook_url, "docs/RUNBOOK.md#" + ops_lower(a.name)) << a.name;
    const std::string heading = "\n### " + a.name + "\n";
    const auto at = runbook.find(heading);
    if (at == std::string::npos) {
      ADD_FAILURE() << "docs/RUNBOOK.md has no entry '### " << a.name << "'";
      continue;
    }
    const auto end = runbook.find("\n#", at + heading.size());
    const std::string entry = runbook.substr(at, end == std::string::npos ? end : end - at);
    for (const char* part : {"**Means:**", "**Look:**", "**Do:**"})
      EXPECT_NE(entry.find(part), std::string::npos) << a.name << " entry lacks " << part;
  }
  // And an alert for the operations the runbook promises: dead runs, busy rate, expiries.
  for (const char* name : {"OnceOrderDeadRuns", "OnceOrderBusyRateHigh", "OnceOrderLeaseExpiries"})
    EXPECT_TRUE(names.contains(name)) << name;
}

// The man page's text with troff's escapes for hyphens and fonts taken out.
std::string ops_man_text() {
  std::string text = ops_read(kSource / "docs/onceorder.1");
  text = std::regex_replace(text, std::regex(R"(\\f[BIRP])"), "");
  text = std::regex_replace(text, std::regex(R"(\\-)"), "-");
  return text;
}

// A help text's subcommands (under "Subcommands:") and long options (under "Options:").
void ops_help(const std::string& help, std::vector<std::string>& subcommands,
              std::vector<std::string>& options) {
  static const std::regex kOption(R"(--([a-z][a-z0-9-]*))");
  std::istringstream in(help);
  std::string line, section;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    if (section == "Subcommands:" && line.size() > 2 && line[2] != ' ') {
      subcommands.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (section == "Options:" && line.size() > 2 && line[2] == '-') {
      for (std::sregex_iterator it(line.begin(), line.end(), kOption), e; it != e; ++it)
        options.push_back((*it)[1].str());
    }
  }
}

TEST(InstallTest, ManPageNamesEverySubcommandAndOption) {
  const std::string man = ops_man_text();
  std::vector<std::string> queue = {""};  // subcommand paths, "" for onceorder itself
  int leaves = 0;
  while (!queue.empty()) {
    const std::string path = queue.back();
    queue.pop_back();
    const auto help = ops_shell(onceorder_bin() + " " + path + " --help");
    ASSERT_EQ(help.exit_code, 0) << path << ": " << help.output;
    std::vector<std::string> subs, options;
    ops_help(help.output, subs, options);
    for (const auto& o : options)
      EXPECT_NE(man.find("--" + o), std::string::npos)
          << "docs/onceorder.1 does not name " << (path.empty() ? "" : path + " ") << "--" << o;
    if (!path.empty() && subs.empty()) {
      ++leaves;
      const bool section = man.find("\n.SS " + path + "\n") != std::string::npos ||
                           man.find("\n.SS \"" + path + "\"\n") != std::string::npos;
      EXPECT_TRUE(section) << "docs/onceorder.1 has no section .SS \"" << path << "\"";
    }
    for (const auto& s : subs) queue.push_back(path.empty() ? s : path + " " + s);
  }
  EXPECT_GE(leaves, 10) << "the help texts were not read";
}

}  // namespace
}  // namespace onceorder::testing
