#include "onceorder/service/legacy_items.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "onceorder/core/csv.hpp"
#include "onceorder/core/timestamp.hpp"
#include "store/legacy_items_store.hpp"

namespace onceorder {
namespace {

using store::Connection;

store::TxOptions tx(store::Clock::time_point deadline, store::TxMode mode) {
  return store::TxOptions{deadline, 3, mode};
}

// One row of a dedup group, from the staging table or the live table.
struct Candidate {
  bool legacy = false;
  std::int64_t id = 0;  // legacy_id or item_id
  int line_no = 0;
  OrderKey key;
  std::string status;  // effective: a resolved in-flight row counts as success / failed
  std::string created_at;
  std::optional<LegacyOutcome> outcome;
};

// Any case, as the status column of `import-items`.
std::optional<LegacyOutcome> parse_outcome(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (s == "made") return LegacyOutcome::made;
  if (s == "not_made") return LegacyOutcome::not_made;
  return std::nullopt;
}

const char* outcome_text(LegacyOutcome o) { return o == LegacyOutcome::made ? "made" : "not_made"; }

// The status an in-flight legacy row moves with, once an operator said what happened to it.
const char* resolved_status(LegacyOutcome o) {
  return o == LegacyOutcome::made ? "success" : "failed";
}

std::string resolved_note(LegacyOutcome o) {
  return o == LegacyOutcome::made
             ? "in flight at the cutover; the operator said it was made"
             : "in flight at the cutover; the operator said it was not made, so it may be "
               "scheduled again";
}

// The part every legacy CSV row shares: as many fields as the header, and a valid order key
// in the first three. nullopt, with the line's error added, when either is wrong.
std::optional<OrderKey> row_key(const CsvLine& l, size_t header_fields,
                                std::vector<FieldError>& errors) {
  const std::string where = "line " + std::to_string(l.line_no);
  if (l.fields.size() != header_fields) {
    errors.push_back(
        {where, fmt::format("has {} fields, the header has {}", l.fields.size(), header_fields)});
    return std::nullopt;
  }
  OrderKey key{l.fields[0], l.fields[1], l.fields[2]};
  if (Status k = validate_order_key(key, ""); !k.ok()) {
    errors.push_back({where, k.fields()[0].field + " " + k.fields()[0].message});
    return std::nullopt;
  }
  return key;
}

bool is_live(const std::string& status) {
  auto s = parse_item_status(status);
  return s && !is_reschedulable(*s);
}

struct Computed {
  DedupPlan plan;
  std::vector<Candidate> legacy_rows;
  std::map<std::pair<bool, std::int64_t>, bool> keep;  // (legacy?, id) → kept
};

Result<Computed> compute(Connection& c, store::LegacyItemsStore& items) {
  Computed out;
  std::map<OrderKey, std::vector<Candidate>> groups;
  OO_ASSIGN_OR_RETURN(auto pending, items.pending(c));
  for (auto& r : pending) {
    Candidate cand{true,
                   r.legacy_id,
                   r.line_no,
                   std::move(r.key),
                   std::move(r.status),
                   std::move(r.created_at),
                   r.resolution ? parse_outcome(*r.resolution) : std::nullopt};
    if (cand.status == "processing" || (cand.status == "wait" && cand.outcome)) {
      out.plan.in_flight.push_back({cand.key, cand.line_no, cand.status, cand.outcome});
      if (!cand.outcome) ++out.plan.unresolved;
    }
    if (cand.outcome) cand.status = resolved_status(*cand.outcome);
    out.legacy_rows.push_back(cand);
    groups[cand.key].push_back(cand);
  }
  OO_ASSIGN_OR_RETURN(auto live, items.live_rows(c));
  for (auto& r : live) {
    groups[r.key].push_back(Candidate{false, r.item_id, 0, r.key, std::move(r.status),
                                      std::move(r.created_at), std::nullopt});
  }
  OO_ASSIGN_OR_RETURN(out.plan.missing_sources, items.missing_sources(c));
  out.plan.legacy_rows = static_cast<std::int64_t>(out.legacy_rows.size());

  for (auto& [key, rows] : groups) {
    std::vector<Candidate> live_rows;
    for (const auto& r : rows)
      if (is_live(r.status)) live_rows.push_back(r);
    // Keep `success` if any (a fact that cannot be undone), else the newest; prefer a row
    // OnceOrder already owns over a legacy one when they tie.
    std::sort(live_rows.begin(), live_rows.end(), [](const Candidate& a, const Candidate& b) {
      const bool sa = a.status == "success", sb = b.status == "success";
      if (sa != sb) return sa;
      if (a.legacy != b.legacy) return !a.legacy;
      if (a.created_at != b.created_at) return a.created_at > b.created_at;
      return a.id > b.id;
    });
    for (size_t i = 0; i < live_rows.size(); ++i)
      out.keep[{live_rows[i].legacy, live_rows[i].id}] = i == 0;
    if (live_rows.size() < 2) continue;
    DedupGroup g{key, {}};
    for (size_t i = 0; i < live_rows.size(); ++i) {
      const auto& r = live_rows[i];
      std::string source =
          r.legacy ? fmt::format("legacy line {}", r.line_no) : fmt::format("item {}", r.id);
      if (r.outcome) source += fmt::format(" ({})", outcome_text(*r.outcome));
      g.rows.push_back({std::move(source), r.status, r.created_at, i == 0});
    }
    out.plan.to_abort += static_cast<std::int64_t>(live_rows.size()) - 1;
    out.plan.duplicates.push_back(std::move(g));
  }
  return out;
}

}  // namespace

Result<std::int64_t> import_legacy_items(store::Database& db, std::string_view csv,
                                         store::Clock::time_point deadline,
                                         const ProgressFn& progress) {
  OO_ASSIGN_OR_RETURN(auto lines, parse_csv(csv));
  auto invalid = [](std::string field, std::string msg) {
    return Status(Code::invalid_request, "invalid file",
                  {FieldError{std::move(field), std::move(msg)}});
  };
  if (lines.empty()) return invalid("file", "is empty: expected a header line");
  const auto& h = lines.front().fields;
  const std::vector<std::string> base = {"site_code", "order_no", "lot_no", "status", "created_at"};
  const bool has_run = h.size() == 6 && h[5] == "run_id";
  if (!(h.size() == 5 || has_run) || !std::equal(base.begin(), base.end(), h.begin())) {
    return invalid("line 1",
                   "the header must be site_code,order_no,lot_no,status,created_at[,run_id]");
  }
  struct Staged {
    int line_no;
    OrderKey key;
    std::string status, created_at, run_id;
  };
  std::vector<Staged> rows;
  std::vector<FieldError> errors;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto& l = lines[i];
    const std::string where = "line " + std::to_string(l.line_no);
    auto checked = row_key(l, h.size(), errors);
    if (!checked) continue;
    OrderKey key = std::move(*checked);
    auto status = parse_item_status(l.fields[3]);
    if (!status) {
      errors.push_back({where, "status '" + l.fields[3] +
                                   "' is not one of wait, processing, success, failed, aborted"});
      continue;
    }
    auto created = normalize_iso8601(l.fields[4]);
    if (!created.ok()) {
      errors.push_back({where, "created_at " + created.status().message()});
      continue;
    }
    rows.push_back({l.line_no, std::move(key), std::string(to_string(*status)), *created,
                    has_run ? l.fields[5] : ""});
  }
  if (!errors.empty()) {
    return Status(Code::invalid_request, "the file has bad lines; nothing was imported",
                  std::move(errors));
  }
  if (rows.empty()) return invalid("file", "has no rows after the header");
  store::LegacyItemsStore items(db.dialect());
  return store::transact<std::int64_t>(
      db, tx(deadline, store::TxMode::write), [&](Connection& c) -> Result<std::int64_t> {
        const auto total = static_cast<std::int64_t>(rows.size());
        std::int64_t done = 0;
        for (const auto& r : rows) {
          OO_RETURN_IF_ERROR(
              items.insert_staged(c, r.line_no, r.key, r.status, r.created_at, r.run_id));
          if (progress) progress({++done, total});
        }
        return total;
      });
}

namespace {

// One line of a resolve file: what the old system did with a key's in-flight row.
struct Resolution {
  int line_no;
  OrderKey key;
  LegacyOutcome outcome;
};

Result<std::vector<Resolution>> read_resolutions(const std::vector<CsvLine>& lines) {
  auto invalid = [](std::string field, std::string msg) {
    return Status(Code::invalid_request, "invalid file",
                  {FieldError{std::move(field), std::move(msg)}});
  };
  if (lines.empty()) return invalid("file", "is empty: expected a header line");
  const std::vector<std::string> header = {"site_code", "order_no", "lot_no", "outcome"};
  if (lines.front().fields != header)
    return invalid("line 1", "the header must be site_code,order_no,lot_no,outcome");
  std::vector<Resolution> words;
  std::map<OrderKey, int> seen;  // key → the line that gave it first
  std::vector<FieldError> errors;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto& l = lines[i];
    const std::string where = "line " + std::to_string(l.line_no);
    auto checked = row_key(l, header.size(), errors);
    if (!checked) continue;
    OrderKey key = std::move(*checked);
    auto outcome = parse_outcome(l.fields[3]);
    if (!outcome) {
      errors.push_back({where, "outcome '" + l.fields[3] + "' is not made or not_made"});
      continue;
    }
    // Two words for one key are at best redundant and at worst contradict each other.
    auto [it, fresh] = seen.emplace(key, l.line_no);
    if (!fresh) {
      errors.push_back({where, fmt::format("{}/{}/{} is already on line {}", key.site_code,
                                           key.order_no, key.lot_no, it->second)});
      continue;
    }
    words.push_back({l.line_no, std::move(key), *outcome});
  }
  if (!errors.empty()) {
    return Status(Code::invalid_request, "the file has bad lines; nothing was recorded",
                  std::move(errors));
  }
  if (words.empty()) return invalid("file", "has no rows after the header");
  return words;
}

// Why a dedup must not move anything yet (conflict), or ok.
Status dedup_refusal(const DedupPlan& plan) {
  if (!plan.missing_sources.empty()) {
    std::vector<FieldError> errors;
    for (const auto& k : plan.missing_sources) {
      if (errors.size() == 20) break;
      errors.push_back({k.site_code + "/" + k.order_no + "/" + k.lot_no, "has no source order"});
    }
    return Status(Code::conflict,
                  fmt::format("{} staged keys have no source order; import them first "
                              "(POST /v1/source-orders); nothing was moved",
                              plan.missing_sources.size()),
                  std::move(errors));
  }
  // The old system may or may not have made an in-flight row: moving it without the
  // operator's word would leave OnceOrder to guess, and a wrong guess makes it twice.
  if (plan.unresolved > 0) {
    std::vector<FieldError> errors;
    for (const auto& r : plan.in_flight) {
      if (errors.size() == 20) break;
      if (r.outcome || r.status != "processing") continue;
      errors.push_back({fmt::format("legacy line {}", r.line_no),
                        fmt::format("{}/{}/{} was in flight (processing) in the old system",
                                    r.key.site_code, r.key.order_no, r.key.lot_no)});
    }
    return Status(Code::conflict,
                  fmt::format("{} staged rows were in flight in the old system; say for each "
                              "whether it was made (onceorder legacy resolve FILE); nothing "
                              "was moved",
                              plan.unresolved),
                  std::move(errors));
  }
  return Status::Ok();
}

}  // namespace

Result<ResolveReport> resolve_legacy_items(store::Database& db, std::string_view csv,
                                           store::Clock::time_point deadline) {
  OO_ASSIGN_OR_RETURN(auto lines, parse_csv(csv));
  OO_ASSIGN_OR_RETURN(const std::vector<Resolution> words, read_resolutions(lines));
  store::LegacyItemsStore items(db.dialect());
  return store::transact<ResolveReport>(
      db, tx(deadline, store::TxMode::write), [&](Connection& c) -> Result<ResolveReport> {
        ResolveReport report;
        std::vector<FieldError> unknown;
        for (const auto& w : words) {
          const auto& k = w.key;
          const std::string outcome = outcome_text(w.outcome);
          OO_ASSIGN_OR_RETURN(auto staged, items.resolve_staged(c, k, outcome));
          OO_ASSIGN_OR_RETURN(auto settled, items.settle_moved(c, k, resolved_status(w.outcome),
                                                               resolved_note(w.outcome)));
          for (std::int64_t item_id : settled)
            OO_RETURN_IF_ERROR(items.note_moved(c, item_id, outcome));
          if (staged == 0 && settled.empty()) {
            unknown.push_back(
                {"line " + std::to_string(w.line_no),
                 fmt::format("{}/{}/{} has no in-flight legacy row (a staged wait or processing "
                             "row, or a wait or processing item of a legacy run)",
                             k.site_code, k.order_no, k.lot_no)});
          }
          report.staged += staged;
          report.settled += static_cast<std::int64_t>(settled.size());
          ++report.lines;
        }
        if (!unknown.empty()) {
          return Status(Code::invalid_request,
                        "the file names keys with nothing in flight; nothing was recorded",
                        std::move(unknown));
        }
        return report;
      });
}

Result<DedupPlan> plan_legacy_dedup(store::Database& db, store::Clock::time_point deadline) {
  store::LegacyItemsStore items(db.dialect());
  return store::transact<DedupPlan>(db, tx(deadline, store::TxMode::read),
                                    [&](Connection& c) -> Result<DedupPlan> {
                                      OO_ASSIGN_OR_RETURN(auto computed, compute(c, items));
                                      return std::move(computed.plan);
                                    });
}

Result<DedupPlan> apply_legacy_dedup(store::Database& db, store::Clock::time_point deadline,
                                     const ProgressFn& progress) {
  store::LegacyItemsStore items(db.dialect());
  return store::transact<DedupPlan>(
      db, tx(deadline, store::TxMode::write), [&](Connection& c) -> Result<DedupPlan> {
        OO_RETURN_IF_ERROR(items.lock_pending(c));
        OO_ASSIGN_OR_RETURN(auto computed, compute(c, items));
        DedupPlan& plan = computed.plan;
        OO_RETURN_IF_ERROR(dedup_refusal(plan));
        std::int64_t total = static_cast<std::int64_t>(computed.legacy_rows.size());
        for (const auto& [id, kept] : computed.keep) total += !id.first && !kept ? 1 : 0;
        std::int64_t done = 0;
        const auto step = [&] {
          if (progress) progress({++done, total});
        };
        // Live rows that lose go first, so that no moment holds two live rows for a key.
        for (const auto& [id, kept] : computed.keep) {
          if (id.first || kept) continue;
          OO_RETURN_IF_ERROR(
              items.abort_item(c, id.second, "legacy dedup: a duplicate of the kept row"));
          step();
        }
        if (!computed.legacy_rows.empty()) {
          OO_ASSIGN_OR_RETURN(plan.run_id, items.insert_run(c));
        }
        for (const auto& r : computed.legacy_rows) {
          auto it = computed.keep.find({true, r.id});
          const bool loser = it != computed.keep.end() && !it->second;
          // A kept `wait` row waited in the old system's queue, which ends here: it belongs to
          // no live run, so it moves as `aborted` (the order is a candidate again) rather than
          // as a `wait` that nothing will take until the reaper notices.
          const bool queued = !loser && r.status == "wait";
          const std::string status = loser || queued ? "aborted" : r.status;
          std::string note =
              loser    ? fmt::format("legacy line {}: a duplicate of the kept row", r.line_no)
              : queued ? fmt::format(
                             "legacy line {}: queued in the old system, never started; "
                             "OnceOrder schedules it anew",
                             r.line_no)
                       : fmt::format("legacy line {}", r.line_no);
          if (r.outcome) note += "; " + resolved_note(*r.outcome);
          OO_ASSIGN_OR_RETURN(auto item_id,
                              items.insert_item(c, plan.run_id, r.key, status, r.created_at, note));
          OO_RETURN_IF_ERROR(items.mark_moved(c, r.id, item_id));
          step();
        }
        plan.applied = true;
        return std::move(plan);
      });
}

}  // namespace onceorder
