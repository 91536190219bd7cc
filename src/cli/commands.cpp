#include "cli/commands.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "onceorder/core/progress.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/legacy_items.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/receipts.hpp"

namespace onceorder::cli {
namespace {

store::Clock::time_point minutes(int n) { return store::Clock::now() + std::chrono::minutes(n); }

std::string key_text(const OrderKey& k) { return k.site_code + "/" + k.order_no + "/" + k.lot_no; }

// Long work's progress on stdout: a bar on a terminal, plain lines in a log or a pipe.
ProgressBar progress_bar(std::string unit) {
  return ProgressBar(std::cout, isatty(STDOUT_FILENO) != 0, std::move(unit));
}

// The rows the old system had in flight, with the operator's word (or its absence).
void print_in_flight(const DedupPlan& plan) {
  std::cout << fmt::format(
      "{} staged rows were in flight in the old system; {} unresolved{}\n", plan.in_flight.size(),
      plan.unresolved,
      plan.unresolved > 0 ? " (`onceorder legacy resolve FILE` before --apply)" : "");
  for (const auto& r : plan.in_flight) {
    const char* word = !r.outcome                          ? "UNRESOLVED"
                       : *r.outcome == LegacyOutcome::made ? "made -> success"
                                                           : "not_made -> failed";
    std::cout << fmt::format("  legacy line {:<6} {:<28} {:<10} {}\n", r.line_no, key_text(r.key),
                             r.status, word);
  }
}

}  // namespace

int fail(const Status& st) {
  std::cerr << "onceorder: " << st.message() << '\n';
  for (const auto& f : st.fields()) std::cerr << "  " << f.field << ": " << f.message << '\n';
  return 2;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::invalid_request, "cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int check(store::Database& db, bool json) {
  auto results = check_invariants(db, minutes(5));
  if (!results.ok()) return fail(results.status());
  bool ok = true;
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& r : *results) {
    ok = ok && r.violations == 0;
    checks.push_back(
        {{"id", r.id}, {"name", r.name}, {"violations", r.violations}, {"sample", r.sample}});
    if (r.accepted > 0) {
      checks.back()["accepted"] = r.accepted;
      checks.back()["accepted_sample"] = r.accepted_sample;
    }
    if (!json) {
      std::cout << fmt::format("{} {:<3} {} ({} violations)\n", r.violations == 0 ? "ok  " : "FAIL",
                               r.id, r.name, r.violations);
      for (const auto& s : r.sample) std::cout << "          " << s << '\n';
      // Accepted by the operator's choice (migrate --live-index=new-rows-only): said, not failed.
      if (r.accepted > 0)
        std::cout << fmt::format("note {:<3} {} accepted (legacy, below the watermark)\n", r.id,
                                 r.accepted);
      for (const auto& s : r.accepted_sample) std::cout << "          " << s << '\n';
    }
  }
  if (json) std::cout << nlohmann::json{{"ok", ok}, {"checks", checks}}.dump(2) << '\n';
  return ok ? 0 : 1;
}

int expire_receipts(store::Database& db, std::chrono::milliseconds retention) {
  auto r = onceorder::expire_receipts(db, retention, minutes(60));
  if (!r.ok()) return fail(r.status());
  std::cout << fmt::format(
      "expired {} order receipts, {} document receipts and {} request "
      "receipts{}\n",
      r->order_receipts, r->document_receipts, r->request_receipts,
      r->complete ? "" : " (stopped at the deadline; run it again)");
  return 0;
}

int import_documents(store::Database& db, const std::string& scope, const std::string& scheme_text,
                     bool dry_run, const std::string& file) {
  LegacyImportOptions options;
  options.dry_run = dry_run;
  if (!scheme_text.empty()) {
    auto scheme = parse_scheme(scheme_text);
    if (!scheme.ok()) return fail(scheme.status());
    options.scheme = *scheme;
  }
  auto text = read_file(file);
  if (!text.ok()) return fail(text.status());
  Numbering numbering(db);
  ProgressBar bar = progress_bar("documents");
  options.progress = bar.fn();
  auto report = numbering.import_legacy(scope, options, *text, minutes(5));
  bar.finish();
  if (!report.ok()) return fail(report.status());
  // The reconciliation report, per declared scheme (values, not the numbers as written).
  std::cout << fmt::format("{:<8} {:>8} {:>12} {:>12} {:>10}\n", "scheme", "count", "min", "max",
                           "collisions");
  for (const auto& s : report->schemes) {
    std::cout << fmt::format("{:<8} {:>8} {:>12} {:>12} {:>10}\n", s.scheme, s.count, s.min, s.max,
                             s.collisions);
  }
  for (const auto& c : report->collisions) std::cout << c.field << ": " << c.message << '\n';
  if (report->dry_run) {
    std::cout << fmt::format(
        "dry run: nothing was written; an import would {} and leave the counter of scope '{}' "
        "at {}\n",
        report->collisions.empty() ? "succeed" : "be refused", scope, report->last_value);
    return report->collisions.empty() ? 0 : 1;
  }
  std::cout << fmt::format("imported {} documents into scope '{}'; its counter is at {}\n",
                           report->imported, scope, report->last_value);
  return 0;
}

int schedule_batch(store::Database& db, const SchedulerOptions& options) {
  Scheduler scheduler(db, options);
  auto run = scheduler.create_run(RunKind::batch, std::nullopt, minutes(1));
  if (!run.ok()) return fail(run.status());
  const auto id = run->run.run_id;
  std::cout << fmt::format("run {}: {} items to process\n", id, run->run.counts.wait) << std::flush;
  ProgressBar bar = progress_bar("items");
  auto done = scheduler.process_run(id, bar.fn());
  bar.finish();
  if (!done.ok()) return fail(done.status());
  std::cout << fmt::format("run {} {}: {} success, {} failed, {} aborted\n", id,
                           to_string(done->status), done->counts.success, done->counts.failed,
                           done->counts.aborted);
  auto stuck = scheduler.stuck_orders(minutes(1));
  if (stuck.ok() && !stuck->empty()) {
    std::cout << fmt::format("{} orders reached {} failed attempts and are no longer picked:\n",
                             stuck->size(), options.max_attempts);
    for (const auto& k : *stuck) std::cout << "  " << key_text(k) << '\n';
  }
  return 0;
}

int schedule_reap(store::Database& db, const SchedulerOptions& options) {
  Scheduler scheduler(db, options);
  auto r = scheduler.reap(minutes(1));
  if (!r.ok()) return fail(r.status());
  std::cout << fmt::format(
      "dead runs set to error: {}\naborted waiting items: {}\n"
      "released processing items: {}\n",
      r->dead_runs, r->aborted_waiting, r->released_processing);
  return 0;
}

int schedule_requeue(store::Database& db, const SchedulerOptions& options,
                     const std::vector<std::string>& parts, bool dry_run) {
  Scheduler scheduler(db, options);
  if (parts.empty()) {
    // No orders named: the ones at the limit, a page at a time.
    ExhaustedFilter filter{.site_code = std::nullopt, .after = {}, .limit = kMaxListLimit};
    std::int64_t n = 0;
    for (;;) {
      auto page = scheduler.list_exhausted(filter, minutes(1));
      if (!page.ok()) return fail(page.status());
      for (const ExhaustedKey& e : *page) {
        std::cout << fmt::format("  {} {} failed attempts, last {}: {}\n", key_text(e.key),
                                 e.attempts, e.last_failed_at, e.last_error);
      }
      n += static_cast<std::int64_t>(page->size());
      if (page->size() < static_cast<size_t>(filter.limit)) break;
      filter.after = page->back().key;
    }
    std::cout << fmt::format(
        "{} orders reached {} failed attempts; name them (SITE ORDER LOT) to "
        "re-queue them\n",
        n, options.max_attempts);
    return 0;
  }
  if (parts.size() % 3 != 0) {
    return fail(Status(
        Code::invalid_request,
        fmt::format("orders are given as SITE ORDER LOT triples; {} words are not", parts.size())));
  }
  std::vector<OrderKey> keys;
  for (size_t i = 0; i < parts.size(); i += 3)
    keys.push_back({parts[i], parts[i + 1], parts[i + 2]});
  auto done = scheduler.requeue(keys, dry_run, minutes(1));
  if (!done.ok()) return fail(done.status());
  for (const OrderKey& k : done->requeued) {
    std::cout << fmt::format("  {} {}\n", key_text(k),
                             dry_run ? "would be re-queued" : "re-queued");
  }
  for (const Skipped& sk : done->skipped)
    std::cout << fmt::format("  {} skipped: {}\n", key_text(sk.key), sk.reason);
  std::cout << fmt::format("{} {} orders; the next run picks them\n",
                           dry_run ? "would re-queue" : "re-queued", done->requeued.size());
  return 0;
}

int import_items(store::Database& db, const std::string& file) {
  auto text = read_file(file);
  if (!text.ok()) return fail(text.status());
  ProgressBar bar = progress_bar("rows");
  auto staged = import_legacy_items(db, *text, minutes(5), bar.fn());
  bar.finish();
  if (!staged.ok()) return fail(staged.status());
  std::cout << fmt::format("staged {} legacy items; `onceorder legacy dedup` shows the plan\n",
                           *staged);
  return 0;
}

int resolve(store::Database& db, const std::string& file) {
  auto text = read_file(file);
  if (!text.ok()) return fail(text.status());
  auto report = resolve_legacy_items(db, *text, minutes(5));
  if (!report.ok()) return fail(report.status());
  std::cout << fmt::format(
      "recorded {} outcomes: {} staged rows will move with them (`onceorder legacy dedup` shows "
      "the plan), {} legacy items were settled now\n",
      report->lines, report->staged, report->settled);
  return 0;
}

int dedup(store::Database& db, bool apply) {
  // Shown even when apply refuses: the refusal is usually about these rows.
  if (apply) {
    auto plan = plan_legacy_dedup(db, minutes(5));
    if (plan.ok() && plan->unresolved > 0) print_in_flight(*plan);
  }
  ProgressBar bar = progress_bar("rows");
  auto plan =
      apply ? apply_legacy_dedup(db, minutes(5), bar.fn()) : plan_legacy_dedup(db, minutes(5));
  bar.finish();
  if (!plan.ok()) return fail(plan.status());
  for (const auto& g : plan->duplicates) {
    std::cout << key_text(g.key) << '\n';
    for (const auto& r : g.rows) {
      std::cout << fmt::format("  {:<6} {:<18} {:<10} {}\n", r.keep ? "keep" : "abort", r.source,
                               r.status, r.created_at);
    }
  }
  std::cout << fmt::format(
      "{} duplicate groups; {} rows {} aborted; {} staged rows {} the live table\n",
      plan->duplicates.size(), plan->to_abort, apply ? "were" : "would be", plan->legacy_rows,
      apply ? "moved into" : "would move into");
  if (!plan->missing_sources.empty()) {
    std::cout << fmt::format("{} staged keys have no source order (import them before --apply):\n",
                             plan->missing_sources.size());
    for (const auto& k : plan->missing_sources) std::cout << "  " << key_text(k) << '\n';
  }
  if (!plan->in_flight.empty()) print_in_flight(*plan);
  if (!apply) std::cout << "nothing was changed; run with --apply to carry this out\n";
  return 0;
}

}  // namespace onceorder::cli
