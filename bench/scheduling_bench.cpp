// Load driver for production scheduling: imports M source orders at one site, creates a
// batch run over them (one `wait` item per order), then times Scheduler::process_run with
// N workers claiming B items per transaction. Every item creates a production order with a
// gapless number from the site's scope "PO-<site>" in the transaction that marks it
// success. Prints `items_per_s=<n>` for bench/run-scheduling.sh, which measures the
// raw-SQL baseline of the same per-item work with pgbench in the same run.
//
// --phase=setup stops after creating the run and prints `run=<id>`; --phase=process
// --run=<id> then processes that run (so that a script can reset server statistics in
// between); the default does both in one process.
//
// Exits non-zero unless every item of the run ended `success` (and the run `done`).
// The database should hold no other schedulable source orders (the script resets it):
// a batch run takes every candidate, and the run must contain exactly the M imported ones.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include "onceorder/service/scheduling.hpp"
#include "onceorder/store/store.hpp"

namespace {

using namespace onceorder;
using Seconds = std::chrono::duration<double>;

store::Clock::time_point in(int seconds) {
  return store::Clock::now() + std::chrono::seconds(seconds);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"OnceOrder production-scheduling load driver"};
  std::string db_url, site = "S1", phase = "all";
  int workers = 1, items = 20000, claim_batch = 16;
  std::int64_t given_run = 0;
  app.add_option("--db", db_url, "database URL")->required();
  app.add_option("--workers", workers, "threads processing the run")->check(CLI::Range(1, 256));
  app.add_option("--items", items, "source orders (= items of the run)")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--claim-batch", claim_batch, "items claimed and completed per transaction")
      ->check(CLI::Range(1, 1000));
  app.add_option("--site", site, "site code of the source orders (scope PO-<site>)");
  app.add_option("--phase", phase, "all | setup | process")
      ->check(CLI::IsMember({"all", "setup", "process"}));
  app.add_option("--run", given_run, "the run to process (--phase=process)");
  CLI11_PARSE(app, argc, argv);
  if (phase == "process" && given_run <= 0)
    return std::cerr << "--phase=process needs --run=<id>\n", 2;

  auto url = parse_db_url(db_url);
  if (!url.ok()) return std::cerr << url.status().message() << '\n', 2;
  store::DatabaseOptions options;
  options.pool_size = workers + 2;
  auto db = store::Database::open(*url, options);
  if (!db.ok()) return std::cerr << db.status().message() << '\n', 2;
  if (auto v = store::migrate(**db); !v.ok()) return std::cerr << v.status().message() << '\n', 2;

  SchedulerOptions so;  // SchedulerOptions{.workers = N, .claim_batch = B}
  so.workers = workers;
  so.claim_batch = claim_batch;
  Scheduler scheduler(**db, so);

  // --- set-up (not timed): source orders, then one batch run over them ----------------
  std::int64_t run_id = given_run;
  double setup_s = 0;
  if (phase != "process") {
    const auto setup_start = store::Clock::now();
    constexpr int kChunk = 10000;  // import_source_orders takes at most 10000 per call
    std::vector<SourceOrder> chunk;
    chunk.reserve(kChunk);
    std::int64_t created = 0;
    for (int first = 1; first <= items; first += kChunk) {
      chunk.clear();
      for (int i = first; i < first + kChunk && i <= items; ++i)
        chunk.push_back({{site, fmt::format("ORD{:08}", i), "L1"}, 1 + i % 100});
      auto imported = scheduler.import_source_orders(chunk, in(300));
      if (!imported.ok())
        return std::cerr << "import: " << imported.status().to_string() << '\n', 2;
      created += imported->created;
    }
    auto run = scheduler.create_run(RunKind::batch, std::nullopt, in(600));
    if (!run.ok()) return std::cerr << "create_run: " << run.status().to_string() << '\n', 2;
    run_id = run->run.run_id;
    if (run->run.counts.wait != items) {
      std::cerr << fmt::format(
          "run {} has {} wait items, expected {} (created {} source orders): the database holds "
          "other schedulable orders or these were scheduled before; reset it\n",
          run_id, run->run.counts.wait, items, created);
      return 2;
    }
    setup_s = Seconds(store::Clock::now() - setup_start).count();
  }
  if (phase == "setup") {
    std::cout << fmt::format("run={} items={} setup_s={:.2f}\n", run_id, items, setup_s);
    return 0;
  }

  // --- timed: process the run ---------------------------------------------------------
  const auto start = store::Clock::now();
  auto done = scheduler.process_run(run_id);
  const double elapsed = Seconds(store::Clock::now() - start).count();
  if (!done.ok()) return std::cerr << "process_run: " << done.status().to_string() << '\n', 1;

  const RunCounts& c = done->counts;
  const bool all_success = c.success == items && c.wait == 0 && c.processing == 0 &&
                           c.failed == 0 && c.aborted == 0 && done->status == RunStatus::done;
  const auto& m = (*db)->metrics();
  std::cout << fmt::format(
      "engine={} workers={} claim_batch={} items={} run={} status={} success={} wait={} "
      "processing={} failed={} aborted={} retries={} setup_s={:.2f} elapsed_s={:.3f} "
      "items_per_s={:.0f}\n",
      url->engine == Engine::sqlite ? "sqlite" : "postgresql", workers, claim_batch, items, run_id,
      to_string(done->status), c.success, c.wait, c.processing, c.failed, c.aborted,
      m.retries_deadlock.load() + m.retries_lock_timeout.load() + m.retries_serialization.load() +
          m.retries_requested.load(),
      setup_s, elapsed, static_cast<double>(c.success) / elapsed);
  if (!all_success) {
    std::cerr << "not every item ended success\n";
    return 1;
  }
  return 0;
}
