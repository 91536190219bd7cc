#include "patroni.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "check_report.hpp"

namespace onceorder::torture {
namespace {

using Json = nlohmann::json;

// How often the sampler asks each node: fine enough to place a promotion between two writes'
// acknowledgements at the workload's pace, cheap enough beside it.
constexpr auto kSampleEvery = std::chrono::milliseconds(100);
// The longest a fault's unavailability window may last from its start.
constexpr std::int64_t kAfterFaultMs = 30000;
// How long the sampler waits for a node's answer before it counts the node unreachable.
constexpr auto kSampleTimeout = std::chrono::milliseconds(500);

std::uint64_t parse_lsn(const std::string& s) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos) return 0;
  return (std::stoull(s.substr(0, slash), nullptr, 16) << 32) |
         std::stoull(s.substr(slash + 1), nullptr, 16);
}

bool is_primary_role(const std::string& role) { return role == "primary"; }

struct Sample {
  std::int64_t t = 0;
  std::string node, role;
  std::int64_t tli = 0;
  std::uint64_t lsn = 0;
};

// The final lineage as the nodes' history files and control files say: where each timeline
// that led to the newest one ended, and the newest. Two nodes giving one timeline two different
// ends is a violation (two promotions that both named themselves the same successor would show
// so).
struct Lineage {
  std::map<std::int64_t, std::uint64_t> ends;  // timeline that ended → where
  std::int64_t current = 0;
  bool contains(std::int64_t tli) const { return tli == current || ends.contains(tli); }
};

Lineage lineage_of(const std::string& text, Report& r) {
  Lineage lineage;
  auto& ends = lineage.ends;
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
      lineage.current = std::max(lineage.current, file_tli);
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
  return lineage;
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

// Where a node was primary on timeline `tli` with WAL past that timeline's end: from its first
// such sample to its last, and when the next timeline was first seen as a primary's. The node
// was a stale primary when `to` came after `promoted` (a write it acknowledged then is on a
// branch the cluster had left); before that, what it wrote past the fork was only its own.
struct PastFork {
  std::string node;
  std::int64_t tli = 0, from = 0, to = 0, promoted = -1;
  std::uint64_t bytes = 0;  // WAL past the fork point, at most
  bool abandoned = false;   // a timeline the final lineage does not hold
  bool stale() const { return promoted >= 0 && to >= promoted; }
};

std::vector<PastFork> past_forks(const std::vector<Sample>& samples,
                                 const std::map<std::int64_t, std::uint64_t>& ends) {
  std::map<std::int64_t, std::int64_t> promoted;  // timeline → first seen as a primary's
  for (const Sample& s : samples)
    if (is_primary_role(s.role) && !promoted.contains(s.tli)) promoted[s.tli] = s.t;
  std::map<std::pair<std::string, std::int64_t>, PastFork> by;
  for (const Sample& s : samples) {
    const auto end = ends.find(s.tli);
    if (!is_primary_role(s.role) || end == ends.end() || s.lsn <= end->second) continue;
    auto [it, fresh] = by.try_emplace({s.node, s.tli}, PastFork{s.node, s.tli, s.t, s.t});
    it->second.to = std::max(it->second.to, s.t);
    it->second.bytes = std::max(it->second.bytes, s.lsn - end->second);
    const auto next = promoted.upper_bound(s.tli);
    if (next != promoted.end()) it->second.promoted = next->second;
  }
  std::vector<PastFork> out;
  for (auto& [k, w] : by) out.push_back(w);
  return out;
}

// In recovery; the timeline (a primary's from its current WAL file's name, a replica's the
// one it receives); the WAL position (written, or received). Empty when no answer came within
// kSampleTimeout (a node frozen by SIGSTOP still accepts TCP but never answers).
std::vector<std::string> sample_row(PGconn* c) {
  static constexpr const char* kSql =
      "SELECT pg_is_in_recovery(), CASE WHEN pg_is_in_recovery() THEN coalesce((SELECT "
      "received_tli FROM pg_stat_wal_receiver), 0) ELSE ('x' || "
      "substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END, CASE WHEN "
      "pg_is_in_recovery() THEN coalesce(pg_last_wal_receive_lsn(), '0/0') - '0/0' ELSE "
      "pg_current_wal_lsn() - '0/0' END";
  if (!PQsendQuery(c, kSql)) return {};
  const auto until = std::chrono::steady_clock::now() + kSampleTimeout;
  while (PQisBusy(c)) {
    pollfd p{PQsocket(c), POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
    if (!PQconsumeInput(c)) return {};
  }
  std::vector<std::string> row;
  while (PGresult* r = PQgetResult(c)) {
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
      for (int i = 0; i < 3; ++i) row.emplace_back(PQgetvalue(r, 0, i));
    PQclear(r);
  }
  return row;
}

// Where a node was primary on a timeline the final lineage does not hold: everything it wrote
// there is gone. Per node and timeline, its first and last sample as that primary.
std::vector<PastFork> abandoned(const std::vector<Sample>& samples, const Lineage& lineage) {
  std::map<std::pair<std::string, std::int64_t>, PastFork> by;
  for (const Sample& s : samples) {
    if (!is_primary_role(s.role) || s.tli == 0 || lineage.contains(s.tli)) continue;
    auto [it, fresh] =
        by.try_emplace({s.node, s.tli}, PastFork{s.node, s.tli, s.t, s.t, s.t, 0, true});
    it->second.to = std::max(it->second.to, s.t);
  }
  std::vector<PastFork> out;
  for (auto& [k, w] : by) out.push_back(w);
  return out;
}

// Each cluster fault's window: from its start until the cluster was healthy again (at most
// kAfterFaultMs from its start), and never into the next fault (end -1: none came).
struct FaultWindow {
  std::string kind;
  std::int64_t start = 0, end = 0;
};

std::vector<FaultWindow> fault_windows(const std::vector<Json>& lines) {
  std::vector<FaultWindow> windows;
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
  return windows;
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
  while (in >> n.name >> n.address >> n.pg_port) nodes.push_back(n);
  return nodes;
}

PgSampler::PgSampler(std::vector<PgNode> nodes, HistoryWriter& history)
    : nodes_(std::move(nodes)), history_(history) {}

void PgSampler::start() {
  stop_ = false;
  for (const PgNode& n : nodes_) threads_.emplace_back([this, n] { loop(n); });
}

void PgSampler::stop() {
  stop_ = true;
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

// One node, on a connection of its own, asked directly: Patroni's REST API is gone exactly when
// its agent was killed, and a PostgreSQL left running as primary then is what must be seen.
void PgSampler::loop(const PgNode& n) {
  const std::string conninfo = fmt::format(
      "host={} port={} user=postgres dbname=postgres connect_timeout=1 "
      "application_name=torture-sampler",
      n.address, n.pg_port);
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(nullptr, &PQfinish);
  Json last;
  while (!stop_) {
    if (!conn || PQstatus(conn.get()) != CONNECTION_OK) conn.reset(PQconnectdb(conninfo.c_str()));
    Json line = {{"phase", "pg"}, {"node", n.name}, {"role", "unreachable"}};
    if (PQstatus(conn.get()) == CONNECTION_OK) {
      const auto row = sample_row(conn.get());
      if (row.size() == 3) {
        line["role"] = row[0] == "t" ? "replica" : "primary";
        line["tli"] = std::stoll(row[1]);
        line["lsn"] = std::stoull(row[2]);
      } else {
        conn.reset();  // frozen or gone: a new connection next time
      }
    }
    const bool moved = last.is_null() || last["role"] != line["role"] ||
                       last.value("tli", 0) != line.value("tli", 0) ||
                       (line["role"] == "primary" && last["lsn"] != line["lsn"]);
    if (moved) history_.record(line);
    last = line;
    std::this_thread::sleep_for(kSampleEvery);
  }
}

CheckResult check_timelines(const std::vector<Json>& lines, const Database& db) {
  Report r;
  r["timelines"];
  std::string text;
  run_command("'" + db.script() + "' timelines '" + db.base() + "'", &text);
  const Lineage lineage = lineage_of(text, r);
  std::vector<Sample> samples;
  for (const Json& l : lines)
    if (l.value("phase", "") == "pg" && l.contains("tli"))
      samples.push_back({l.value("t", std::int64_t{0}), l.value("node", ""), l.value("role", ""),
                         l.value("tli", std::int64_t{0}), l.value("lsn", std::uint64_t{0})});
  auto forks = past_forks(samples, lineage.ends);
  for (const auto& w : forks)
    r.note("timelines",
           "{} was primary on timeline {} with up to {} bytes of WAL past its end from {} to {} "
           "ms; the next timeline's primary was first seen at {} ms",
           w.node, w.tli, w.bytes, w.from, w.to, w.promoted);
  for (const auto& w : abandoned(samples, lineage)) {
    r.note("timelines",
           "{} was primary from {} to {} ms on timeline {}, which the final lineage (up to "
           "timeline {}) does not hold",
           w.node, w.from, w.to, w.tli, lineage.current);
    forks.push_back(w);  // stale throughout: promoted == from
  }
  long missing_elsewhere = 0;
  for (const AckedWrite& a : acked_writes(lines, db)) {
    if (a.stored) continue;
    const auto w = std::find_if(forks.begin(), forks.end(), [&](const PastFork& f) {
      return f.stale() && a.t >= f.promoted && a.t <= f.to + kSampleEvery.count();
    });
    if (w == forks.end()) {
      ++missing_elsewhere;
      continue;
    }
    r.violation("timelines",
                "{} acknowledged at {} ms, not in the final database: {} was primary on "
                "timeline {}, {} {} ms",
                a.what, a.t, w->node, w->tli,
                w->abandoned ? "which the final lineage does not hold, from"
                             : "which the next timeline's primary had left at",
                w->promoted);
  }
  if (missing_elsewhere > 0)
    r.note("timelines", "{} acknowledged writes missing outside any such window",
           missing_elsewhere);
  r.note("timelines", "{} timeline switches on the final lineage, {} samples", lineage.ends.size(),
         samples.size());
  auto results = r.take();
  return results.front();
}

std::string unavailability(const std::vector<Json>& lines, const std::string& path) {
  std::vector<std::int64_t> acks;
  std::int64_t workload_end = 0;  // the last request of the workload (not the final replays)
  for (const Json& l : lines) {
    if (l.value("phase", "") == "invoke" && !l.value("final", false))
      workload_end = std::max(workload_end, l.value("t", std::int64_t{0}));
    if (l.value("phase", "") != "ok") continue;
    const std::string type = l.value("type", "");
    const bool write = type == "order" || type == "document" || type == "cancel" ||
                       type == "adjust" || type == "source_orders";
    const bool replayed =
        l.contains("response") && l["response"].is_object() && l["response"].contains("_replayed");
    if (write && !replayed) acks.push_back(l.value("t", std::int64_t{0}));
  }
  std::sort(acks.begin(), acks.end());
  const std::vector<FaultWindow> windows = fault_windows(lines);
  std::map<std::string, std::vector<std::int64_t>> by_kind;
  int cut_short = 0;
  for (const FaultWindow& w : windows) {
    const std::int64_t end = w.end < 0 ? w.start + kAfterFaultMs : w.end;
    if (end > workload_end) {  // no client asked any more: the window cannot be measured
      ++cut_short;
      continue;
    }
    // Up to the first acknowledgement at or after the window's end: a service still down then
    // is down for all of it.
    std::int64_t prev = w.start, longest = 0;
    auto it = std::lower_bound(acks.begin(), acks.end(), w.start);
    for (; it != acks.end(); ++it) {
      longest = std::max(longest, std::min(*it, end) - prev);
      prev = *it;
      if (*it >= end) break;
    }
    if (it == acks.end()) longest = std::max(longest, end - prev);
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
  if (cut_short > 0)
    text += fmt::format("  ({} faults left out: they ended after the workload)\n", cut_short);
  j["left_out"] = cut_short;
  std::ofstream(path) << j.dump(2) << '\n';
  return text;
}

}  // namespace onceorder::torture
