#include "patroni.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "check_report.hpp"
#include "e2e/http_client.hpp"

namespace onceorder::torture {
namespace {

using Json = nlohmann::json;

// How often the sampler asks each node: fine enough to place a promotion between two writes'
// acknowledgements at the workload's pace, cheap enough beside it.
constexpr auto kSampleEvery = std::chrono::milliseconds(100);
// The longest a fault's unavailability window may last from its start.
constexpr std::int64_t kAfterFaultMs = 30000;

std::uint64_t parse_lsn(const std::string& s) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos) return 0;
  return (std::stoull(s.substr(0, slash), nullptr, 16) << 32) |
         std::stoull(s.substr(slash + 1), nullptr, 16);
}

bool is_primary_role(const std::string& role) { return role == "master" || role == "primary"; }

struct Sample {
  std::int64_t t = 0;
  std::string node, role;
  std::int64_t tli = 0;
  std::uint64_t lsn = 0;
};

// The timelines' fork points as the nodes' history files say: (timeline that ended) → where.
// Two nodes giving one timeline two different ends is a violation (two promotions that both
// named themselves the same successor would show so).
std::map<std::int64_t, std::uint64_t> fork_points(const std::string& text, Report& r) {
  std::map<std::int64_t, std::uint64_t> ends;
  std::map<std::int64_t, std::string> said_by;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string node, kind, lsn;
    std::int64_t file_tli = 0, parent = 0;
    f >> node >> kind;
    if (kind == "current") {
      f >> file_tli;
      r.note("timelines", "{}: timeline {} (pg_control, last checkpoint)", node, file_tli);
      continue;
    }
    if (!(f >> file_tli >> parent >> lsn)) continue;
    const std::uint64_t at = parse_lsn(lsn);
    auto [it, fresh] = ends.emplace(parent, at);
    if (fresh) {
      said_by[parent] = node;
    } else if (it->second != at) {
      r.violation("timelines", "timeline {} ended at {:X} on {} but at {:X} on {}", parent,
                  it->second, said_by[parent], at, node);
    }
  }
  return ends;
}

struct AckedWrite {
  std::int64_t t = 0;
  std::string what;  // "order <id>" or "document <scope> <value>"
  bool stored = true;
};

// The acknowledged orders and numbers, and whether the final database holds each.
std::vector<AckedWrite> acked_writes(const std::vector<Json>& lines, const Database& db) {
  std::set<std::string> orders, documents;
  for (const auto& row : db.rows("SELECT order_id FROM orders")) orders.insert(row.at(0));
  for (const auto& row : db.rows("SELECT scope, value FROM documents"))
    documents.insert(row.at(0) + " " + row.at(1));
  std::map<std::int64_t, Json> requests;
  std::vector<AckedWrite> out;
  for (const Json& l : lines) {
    const std::string phase = l.value("phase", "");
    if (phase == "invoke") requests[l.value("id", std::int64_t{-1})] = l.value("request", Json());
    if (phase != "ok" || !l.contains("response") || !l["response"].is_object()) continue;
    const Json& res = l["response"];
    const std::string type = l.value("type", "");
    AckedWrite w{l.value("t", std::int64_t{0}), "", true};
    if (type == "order" && res.contains("order_id")) {
      w.what = "order " + res.value("order_id", "");
      w.stored = orders.contains(res.value("order_id", ""));
    } else if (type == "document" && res.contains("value")) {
      const std::string scope = requests[l.value("id", std::int64_t{-1})].value("scope", "");
      const std::string key = scope + " " + std::to_string(res.value("value", std::int64_t{0}));
      w.what = "document " + key;
      w.stored = documents.contains(key);
    } else {
      continue;
    }
    out.push_back(std::move(w));
  }
  return out;
}

// Where a node was primary on timeline `tli` with WAL past that timeline's end: from the
// successor's promotion (or the first such sample) to its last sample as that primary.
struct StaleWindow {
  std::string node;
  std::int64_t tli = 0, from = 0, to = 0;
  std::uint64_t past_fork = 0;  // bytes of WAL past the fork point, at most
};

std::vector<StaleWindow> stale_windows(const std::vector<Sample>& samples,
                                       const std::map<std::int64_t, std::uint64_t>& ends) {
  std::map<std::int64_t, std::int64_t> promoted;  // timeline → first seen as a primary's
  for (const Sample& s : samples)
    if (is_primary_role(s.role) && !promoted.contains(s.tli)) promoted[s.tli] = s.t;
  std::map<std::pair<std::string, std::int64_t>, StaleWindow> by;
  for (const Sample& s : samples) {
    const auto end = ends.find(s.tli);
    if (!is_primary_role(s.role) || end == ends.end() || s.lsn <= end->second) continue;
    std::int64_t next_at = s.t;
    for (const auto& [tli, t] : promoted)
      if (tli > s.tli) next_at = std::min(next_at, t);
    auto [it, fresh] = by.try_emplace({s.node, s.tli}, StaleWindow{s.node, s.tli, next_at, s.t});
    it->second.from = std::min(it->second.from, next_at);
    it->second.to = std::max(it->second.to, s.t);
    it->second.past_fork = std::max(it->second.past_fork, s.lsn - end->second);
  }
  std::vector<StaleWindow> out;
  for (auto& [k, w] : by) out.push_back(w);
  return out;
}

std::int64_t percentile(std::vector<std::int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

const std::set<std::string>& cluster_faults() {
  static const std::set<std::string> faults = {"pg_kill",    "patroni_kill",      "switchover",
                                               "failover",   "partition_primary", "partition_serve",
                                               "etcd_split", "pg_stop",           "etcd_restart"};
  return faults;
}

std::vector<PgNode> patroni_nodes(const Database& db) {
  std::string out;
  if (run_command("'" + db.script() + "' nodes '" + db.base() + "'", &out) != 0) return {};
  std::vector<PgNode> nodes;
  std::istringstream in(out);
  PgNode n;
  while (in >> n.name >> n.address >> n.rest_port) nodes.push_back(n);
  return nodes;
}

PgSampler::PgSampler(std::vector<PgNode> nodes, HistoryWriter& history)
    : nodes_(std::move(nodes)), history_(history) {
  for (const PgNode& n : nodes_) testing::HttpClient::route(n.rest_port, n.address);
}

void PgSampler::start() {
  stop_ = false;
  thread_ = std::thread([this] { loop(); });
}

void PgSampler::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void PgSampler::loop() {
  std::map<std::string, Json> last;
  while (!stop_) {
    for (const PgNode& n : nodes_) {
      Json line = {{"phase", "pg"}, {"node", n.name}};
      try {
        testing::HttpClient c(n.rest_port, std::chrono::milliseconds(500));
        const Json j = c.get("/patroni").json();
        const Json& x = j.value("xlog", Json::object());
        line["role"] = j.value("role", "");
        line["tli"] = j.value("timeline", std::int64_t{0});
        line["lsn"] = x.value("location", x.value("received_location", std::uint64_t{0}));
      } catch (const std::exception&) {
        line["role"] = "unreachable";  // stopped, partitioned from us, or restarting
      }
      Json& prev = last[n.name];
      const bool moved = prev.is_null() || prev["role"] != line["role"] ||
                         prev.value("tli", 0) != line.value("tli", 0) ||
                         (is_primary_role(line["role"]) && prev["lsn"] != line["lsn"]);
      if (moved) history_.record(line);
      prev = line;
    }
    std::this_thread::sleep_for(kSampleEvery);
  }
}

CheckResult check_timelines(const std::vector<Json>& lines, const Database& db) {
  Report r;
  r["timelines"];
  std::string text;
  run_command("'" + db.script() + "' timelines '" + db.base() + "'", &text);
  const auto ends = fork_points(text, r);
  std::vector<Sample> samples;
  for (const Json& l : lines)
    if (l.value("phase", "") == "pg" && l.contains("tli"))
      samples.push_back({l.value("t", std::int64_t{0}), l.value("node", ""), l.value("role", ""),
                         l.value("tli", std::int64_t{0}), l.value("lsn", std::uint64_t{0})});
  const auto windows = stale_windows(samples, ends);
  for (const auto& w : windows)
    r.note("timelines",
           "{} was primary on timeline {} with up to {} bytes of WAL past its end, from {} to "
           "{} ms (after a later timeline's promotion)",
           w.node, w.tli, w.past_fork, w.from, w.to);
  long missing_elsewhere = 0;
  for (const AckedWrite& a : acked_writes(lines, db)) {
    if (a.stored) continue;
    const auto w = std::find_if(windows.begin(), windows.end(), [&](const StaleWindow& s) {
      return a.t >= s.from && a.t <= s.to + kSampleEvery.count();
    });
    if (w == windows.end()) {
      ++missing_elsewhere;
      continue;
    }
    r.violation("timelines",
                "{} acknowledged at {} ms, not in the final database: {} was still primary on "
                "timeline {}, which a later timeline had left at {} ms",
                a.what, a.t, w->node, w->tli, w->from);
  }
  if (missing_elsewhere > 0)
    r.note("timelines", "{} acknowledged writes missing outside any such window",
           missing_elsewhere);
  r.note("timelines", "{} timeline switches on the final lineage, {} samples", ends.size(),
         samples.size());
  auto results = r.take();
  return results.front();
}

std::string unavailability(const std::vector<Json>& lines, const std::string& path) {
  std::vector<std::int64_t> acks;
  for (const Json& l : lines) {
    if (l.value("phase", "") != "ok") continue;
    const std::string type = l.value("type", "");
    const bool write = type == "order" || type == "document" || type == "cancel" ||
                       type == "adjust" || type == "source_orders";
    const bool replayed =
        l.contains("response") && l["response"].is_object() && l["response"].contains("_replayed");
    if (write && !replayed) acks.push_back(l.value("t", std::int64_t{0}));
  }
  std::sort(acks.begin(), acks.end());
  // Each fault's window: from its start until the cluster was healthy again (at most 30 s
  // after the fault's end), and never into the next fault.
  struct Window {
    std::string kind;
    std::int64_t start = 0, end = 0;
  };
  std::vector<Window> windows;
  for (const Json& l : lines) {
    if (l.value("phase", "") != "nemesis") continue;
    const std::string fault = l.value("fault", "");
    const std::int64_t t = l.value("t", std::int64_t{0});
    if (!windows.empty() && windows.back().end < 0 && fault == "recovered")
      windows.back().end = std::min(t, windows.back().start + kAfterFaultMs);
    if (!windows.empty() && windows.back().end < 0) windows.back().end = t;
    if (cluster_faults().contains(fault))
      windows.push_back({fault, t - l.value("ms", std::int64_t{0}), -1});
  }
  std::map<std::string, std::vector<std::int64_t>> by_kind;
  for (const Window& w : windows) {
    const std::int64_t end = w.end < 0 ? w.start + kAfterFaultMs : w.end;
    std::int64_t prev = w.start, longest = 0;
    for (auto it = std::lower_bound(acks.begin(), acks.end(), w.start);
         it != acks.end() && *it <= end; ++it) {
      longest = std::max(longest, *it - prev);
      prev = *it;
    }
    by_kind[w.kind].push_back(longest);
    by_kind["all"].push_back(longest);
  }
  Json j = Json::object();
  std::string text;
  for (const auto& [kind, v] : by_kind) {
    j[kind] = {{"faults", v.size()},
               {"p50_ms", percentile(v, 0.5)},
               {"p99_ms", percentile(v, 0.99)},
               {"max_ms", percentile(v, 1.0)}};
    text += fmt::format(
        "  {:<18} {:>3} faults: longest gap between acknowledged writes p50 {} "
        "ms, p99 {} ms, max {} ms\n",
        kind, v.size(), percentile(v, 0.5), percentile(v, 0.99), percentile(v, 1.0));
  }
  std::ofstream(path) << j.dump(2) << '\n';
  return text;
}

}  // namespace onceorder::torture
