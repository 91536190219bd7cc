#include "nemesis.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "e2e/http_client.hpp"
#include "patroni.hpp"

namespace onceorder::torture {
namespace {

std::int64_t ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t)
      .count();
}

}  // namespace

Nemesis::Nemesis(NemesisOptions options, std::vector<std::unique_ptr<Serve>>& serves,
                 const Database& db, HistoryWriter& history, OutboxTargets outbox)
    : options_(std::move(options)),
      serves_(serves),
      db_(db),
      history_(history),
      outbox_(std::move(outbox)),
      state_(options_.seed * 7919 + 17) {}

bool Nemesis::sleep(std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!stop_ && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return !stop_;
}

void Nemesis::run() {
  std::mt19937_64 rng(state_);
  if (options_.faults.empty()) return;
  // Rounds of every listed fault in a seeded order: even a short run sees each kind. A receiver
  // fault lasts on its own while the nemesis goes on: a server's fault after it follows without
  // a gap (the two overlap), another receiver fault waits for its end and the gap.
  std::vector<std::string> round;
  const auto is_receiver = [](const std::string& f) { return f.rfind("receiver_", 0) == 0; };
  bool after_receiver = false;
  for (;;) {
    if (round.empty()) {
      round = options_.faults;
      std::shuffle(round.begin(), round.end(), rng);
    }
    const std::string fault = round.back();
    round.pop_back();
    const auto gap = std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(
        options_.min_gap.count(), options_.max_gap.count())(rng));
    if (!(after_receiver && !is_receiver(fault)) && !sleep(gap)) return;
    if (is_receiver(fault) && !sleep(std::chrono::duration_cast<std::chrono::milliseconds>(
                                  receivers_until_ - std::chrono::steady_clock::now())))
      return;
    state_ = rng();
    after_receiver = is_receiver(fault);
    inject(fault);
  }
}

void Nemesis::inject(const std::string& fault) {
  if (options_.patroni && cluster_faults().contains(fault))
    cluster_fault(fault);
  else if (fault == "kill")
    kill_one();
  else if (fault == "pause")
    pause_one();
  else if (fault == "pg_restart")
    database_fault("pg_restart", &Database::restart);
  else if (fault == "failover")
    database_fault("failover", &Database::failover);
  else if (fault == "receiver_fail")
    receiver_fault(fault, ReceiverFault::fail);
  else if (fault == "receiver_stall")
    receiver_fault(fault, ReceiverFault::stall);
  else if (fault == "receiver_drop")
    receiver_fault(fault, ReceiverFault::drop);
  else if (fault == "poller_kill")
    kill_poller();
}

void Nemesis::kill_one() {
  std::mt19937_64 rng(state_);
  Serve& s = *serves_[std::uniform_int_distribution<size_t>(0, serves_.size() - 1)(rng)];
  if (!s.running()) return;
  const auto t = std::chrono::steady_clock::now();
  s.kill_hard();
  ++counts_["kill"];
  sleep(std::chrono::milliseconds(std::uniform_int_distribution<int>(200, 1500)(rng)));
  bool up = false;
  for (int attempt = 0; attempt < 5 && !up; ++attempt) up = s.start();
  history_.note({{"fault", "kill"}, {"port", s.port()}, {"restarted", up}, {"ms", ms_since(t)}});
}

// The serve that holds a claim now (item owners are "host:pid:nonce"), if one does within a
// moment: pausing it is what tests the fences.
std::optional<size_t> Nemesis::claim_holder() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!stop_ && std::chrono::steady_clock::now() < until) {
    try {
      for (const auto& row :
           db_.rows("SELECT DISTINCT owner FROM schedule_items WHERE status = 'processing'")) {
        const std::string& owner = row.at(0);
        const size_t a = owner.find(':'), b = owner.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string pid = owner.substr(a + 1, b - a - 1);
        for (size_t i = 0; i < serves_.size(); ++i)
          if (serves_[i]->running() && std::to_string(serves_[i]->pid()) == pid) return i;
      }
    } catch (const std::exception&) {
      return std::nullopt;  // no primary at this moment
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

void Nemesis::pause_one() {
  std::mt19937_64 rng(state_);
  const std::optional<size_t> holder = claim_holder();
  const size_t victim =
      holder ? *holder : std::uniform_int_distribution<size_t>(0, serves_.size() - 1)(rng);
  Serve& s = *serves_[victim];
  if (!s.running()) return;
  const auto t = std::chrono::steady_clock::now();
  s.pause();
  ++counts_["pause"];
  // While it sleeps past its lease, another process takes its work away: the reaper, then
  // a run of every candidate. When it wakes, its fences must refuse what it still holds.
  sleep(options_.lease + std::chrono::milliseconds(700));
  for (size_t i = 0; i < serves_.size(); ++i) {
    if (i == victim || !serves_[i]->running()) continue;
    try {
      testing::HttpClient c(serves_[i]->port(), std::chrono::seconds(3));
      c.post("/v1/maintenance/reap", "{}");
      c.post("/v1/schedule/runs?wait=false", "{}");
    } catch (const std::exception&) {
      // The other process may be down at this moment; the pause still happened.
    }
    break;
  }
  sleep(std::chrono::milliseconds(1500));
  s.resume();
  history_.note({{"fault", "pause"},
                 {"port", s.port()},
                 {"claim_holder", holder.has_value()},
                 {"ms", ms_since(t)}});
}

void Nemesis::database_fault(const char* name, bool (Database::*act)() const) {
  if (!db_.is_postgres()) return;
  const auto t = std::chrono::steady_clock::now();
  const bool ok = (db_.*act)();
  ++counts_[name];
  history_.note({{"fault", name}, {"ok", ok}, {"ms", ms_since(t)}});
}

// The fault is held and healed by the script; the recovery (a leader with a synchronous
// standby, every replica streaming) is timed apart.
void Nemesis::cluster_fault(const std::string& name) {
  const auto t = std::chrono::steady_clock::now();
  std::string what;
  const bool ok = db_.fault(name, state_, &what);
  ++counts_[name];
  history_.note({{"fault", name}, {"ok", ok}, {"what", what}, {"ms", ms_since(t)}});
  const auto r = std::chrono::steady_clock::now();
  const bool healthy = db_.wait_sync();
  history_.note({{"fault", "recovered"}, {"after", name}, {"ok", healthy}, {"ms", ms_since(r)}});
}

// Every receiver at once, for 2–4 s; the nemesis goes on meanwhile (the fault ends on its own).
void Nemesis::receiver_fault(const std::string& name, ReceiverFault fault) {
  if (outbox_.receivers.empty()) return;
  std::mt19937_64 rng(state_);
  const std::chrono::milliseconds length(std::uniform_int_distribution<int>(2000, 4000)(rng));
  for (Receiver* r : outbox_.receivers) r->fault(fault, length);
  receivers_until_ = std::chrono::steady_clock::now() + length;
  ++counts_[name];
  history_.note({{"fault", name}, {"ms", length.count()}});
}

void Nemesis::kill_poller() {
  if (!outbox_.poller || !outbox_.poller->running()) return;
  std::mt19937_64 rng(state_);
  const auto t = std::chrono::steady_clock::now();
  outbox_.poller->kill_hard();
  ++counts_["poller_kill"];
  sleep(std::chrono::milliseconds(std::uniform_int_distribution<int>(200, 1000)(rng)));
  const bool up = outbox_.poller->start();
  history_.note({{"fault", "poller_kill"}, {"restarted", up}, {"ms", ms_since(t)}});
}

bool Nemesis::heal() {
  bool ok = true;
  for (Receiver* r : outbox_.receivers) r->fault(ReceiverFault::none, std::chrono::milliseconds(0));
  if (outbox_.poller) ok = outbox_.poller->start();
  for (auto& s : serves_) {
    if (s->paused()) s->resume();
    bool up = s->running();
    for (int attempt = 0; attempt < 5 && !up; ++attempt) up = s->start();
    ok = ok && up;
  }
  ok = db_.wait_sync() && ok;
  history_.note({{"fault", "heal"}, {"ok", ok}});
  return ok;
}

}  // namespace onceorder::torture
