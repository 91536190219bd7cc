#include "onceorder/service/numbering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "onceorder/core/csv.hpp"
#include "onceorder/core/invariant.hpp"
#include "onceorder/core/text.hpp"
#include "store/numbering_store.hpp"

namespace onceorder {
namespace {

using store::Connection;
using store::Then;
using store::TxOptions;

Status invalid(std::string field, std::string message) {
  return Status(Code::invalid_request, "invalid request",
                {FieldError{std::move(field), std::move(message)}});
}

Status check_scope_name(std::string_view scope) {
  if (is_valid_scope_name(scope)) return Status::Ok();
  return invalid("scope", fmt::format("must be 1–{} characters of A-Z, a-z, 0-9, '.', '_' or '-'",
                                      kMaxScopeName));
}

using store::read_tx;
using store::write_tx;

Status scope_exhausted(std::string_view scope, std::int64_t max) {
  return Status(Code::scope_exhausted,
                fmt::format("scope '{}' has issued every number up to its max {}; nothing "
                            "was written",
                            scope, max));
}

Status waited_out() {
  return Status(Code::busy,
                "the request waited for its scope until its deadline; nothing was written, "
                "retry the request");
}

Status key_reused() {
  return Status(Code::idempotency_key_reused,
                "this Idempotency-Key was used for a document with another title or body");
}

// A key's request is the same one again when its title and body are those stored (the body
// in the API's canonical form, so equal bodies are equal texts).
bool same_document(const IssueRequest& a, std::string_view title, const Document& stored) {
  return a.title == title && a.header == stored.header && a.lines == stored.lines;
}

Result<Issued> replay_or_refuse(const store::DocumentReceipt& receipt, const IssueRequest& req) {
  if (!same_document(req, receipt.title, receipt.document)) return key_reused();
  return Issued{receipt.document, true};
}

// A batch's answers: the lane's, and for each request it left unanswered, `rest`'s.
template <class Rest>
std::vector<Result<Issued>> completed(std::vector<std::optional<Result<Issued>>> lane,
                                      std::span<const IssueRequest> reqs, Rest rest) {
  std::vector<Result<Issued>> out;
  out.reserve(reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i)
    out.push_back(lane[i] ? std::move(*lane[i]) : rest(reqs[i]));
  return out;
}

// What issue_batch decided, per request (its index in the batch), before it is handed out.
using BatchAnswers = std::vector<std::pair<std::size_t, Result<Issued>>>;

// One scope's part of a batch, decided inside the batch's transaction in arrival order:
// every decision is the one a request alone would have met after the ones before it
// committed.
struct ScopePlan {
  // A request without a stored receipt takes the next new document (`fresh`), unless an
  // earlier request of the batch took one with its key: then it replays that one (`same_key`)
  // or is refused (`other_title`) — provided the earlier one got its number at all.
  enum class Plan { fresh, same_key, other_title };
  struct Step {
    std::size_t at;
    Plan plan;
    std::size_t ordinal;  // the new document's place among the scope's new documents
  };
  std::string_view scope;
  std::vector<Step> steps;
  std::vector<store::NewDocument> docs;              // per new document, in order
  std::map<std::string_view, std::size_t> new_keys;  // key → ordinal of its new document
  std::size_t granted = 0;                           // how many got a number (fit under max)
  std::int64_t max = 0;
};

// The requests `at` of `scope` against its stored receipts: replays answered now, the rest
// planned.
ScopePlan plan_scope(std::string_view scope, std::span<const IssueRequest> reqs,
                     std::span<const std::size_t> at,
                     const std::map<std::string, store::DocumentReceipt, std::less<>>& stored,
                     BatchAnswers& answers) {
  using Plan = ScopePlan::Plan;
  ScopePlan p;
  p.scope = scope;
  for (std::size_t i : at) {
    const IssueRequest& r = reqs[i];
    if (r.idempotency_key) {
      const std::string_view key = *r.idempotency_key;
      if (auto it = stored.find(key); it != stored.end()) {
        answers.emplace_back(i, replay_or_refuse(it->second, r));
        continue;
      }
      if (auto it = p.new_keys.find(key); it != p.new_keys.end()) {
        const store::NewDocument& first = p.docs[it->second];
        const bool same =
            first.title == r.title && first.header == r.header && first.lines == r.lines;
        p.steps.push_back({i, same ? Plan::same_key : Plan::other_title, it->second});
        continue;
      }
      p.new_keys.emplace(key, p.docs.size());
    }
    p.steps.push_back({i, Plan::fresh, p.docs.size()});
    p.docs.push_back({r.title, r.principal, r.header, r.lines});
  }
  return p;
}

void answer_scope(const ScopePlan& p, const std::vector<Document>& docs, BatchAnswers& answers) {
  using Plan = ScopePlan::Plan;
  for (const ScopePlan::Step& s : p.steps) {
    if (s.ordinal >= p.granted) {
      answers.emplace_back(s.at, scope_exhausted(p.scope, p.max));
      continue;
    }
    switch (s.plan) {
      case Plan::fresh:
        answers.emplace_back(s.at, Issued{docs[s.ordinal], false});
        break;
      case Plan::same_key:
        answers.emplace_back(s.at, Issued{docs[s.ordinal], true});
        break;
      case Plan::other_title:
        answers.emplace_back(s.at, key_reused());
        break;
    }
  }
}

// Every scope of a batch in one transaction: per scope its stored receipts (when it has
// keys), then every decision and every write of all scopes at once, carrying the commit
// (store::NumberingStore::claim_scopes). Without `wait`, a scope whose counter is held
// elsewhere, or that does not exist yet, gets nothing: its requests that still need a number
// go to `handed_back`. With `wait` (the waiting lane of one scope), a new scope is created
// and a held counter waited for.
Status issue_scopes(store::NumberingStore& store, Connection& c, std::span<const IssueRequest> reqs,
                    const std::map<std::string_view, std::vector<std::size_t>>& by_scope, bool wait,
                    BatchAnswers& answers, std::vector<std::size_t>& handed_back) {
  std::vector<ScopePlan> plans;
  std::vector<store::ScopeClaim> claims;
  for (const auto& [scope, at] : by_scope) {
    std::vector<std::string_view> keys;
    for (std::size_t i : at)
      if (reqs[i].idempotency_key) keys.push_back(*reqs[i].idempotency_key);
    std::map<std::string, store::DocumentReceipt, std::less<>> stored;
    if (!keys.empty()) {
      OO_ASSIGN_OR_RETURN(stored, store.find_receipts(c, scope, keys));
    }
    ScopePlan p = plan_scope(scope, reqs, at, stored, answers);
    if (p.docs.empty()) continue;
    store::ScopeClaim claim{scope, p.docs, {}};
    for (const auto& [key, ordinal] : p.new_keys) claim.receipts.push_back({key, ordinal});
    claims.push_back(std::move(claim));
    plans.push_back(std::move(p));
  }
  if (plans.empty()) return Status::Ok();
  auto claimed = store.claim_scopes(c, claims, wait, Then::commit);
  // A key committed by a request outside this batch: run again, which replays it.
  if (claimed.status().code() == Code::unique_violation)
    return Status(Code::retry_transaction, "idempotency key taken concurrently");
  OO_ASSIGN_OR_RETURN(auto found, std::move(claimed));
  for (ScopePlan& p : plans) {
    auto it = found.find(p.scope);
    if (it == found.end()) {
      for (const ScopePlan::Step& step : p.steps) handed_back.push_back(step.at);
      continue;
    }
    p.granted = it->second.docs.size();
    p.max = it->second.row.format.max;
    answer_scope(p, it->second.docs, answers);
  }
  return Status::Ok();
}

// Why upsert_format refused `format`, read under the counter row's lock (configure holds it).
Status format_refused(store::NumberingStore& store, Connection& c, std::string_view scope,
                      const ScopeFormat& format) {
  OO_ASSIGN_OR_RETURN(auto info, store.scope_info(c, scope));
  if (!info) return Status(Code::internal, "scope vanished while configuring it");
  if (info->last_value > format.max) {
    return Status(Code::scope_conflict,
                  fmt::format("scope '{}' already used value {}; max must be at least that", scope,
                              info->last_value));
  }
  std::vector<FieldError> fields;
  const ScopeFormat& now = info->format;
  if (format.width != now.width)
    fields.push_back({"width", fmt::format("must stay {} once numbers were issued", now.width)});
  if (format.radix != now.radix)
    fields.push_back({"radix", fmt::format("must stay {} once numbers were issued", now.radix)});
  return Status(Code::scope_conflict,
                fmt::format("scope '{}' has issued {} numbers like '{}'; its width and radix stay "
                            "as they are, so that every number of the scope looks alike (send "
                            "them with the new max); nothing was changed",
                            scope, info->issued, format_number(1, now.radix, now.width)),
                std::move(fields));
}
// A legacy import's rows, as the file gives them.
struct LegacyEntry {
  int line_no;
  std::int64_t value;
  std::string number;
  LegacyScheme scheme;
  std::string title;
  bool collides = false;
};

struct LegacyFile {
  std::vector<LegacyEntry> entries;
  std::vector<FieldError> collisions;      // between the file's own lines
  std::map<std::int64_t, int> first_line;  // value → line that holds it
};

FieldError line_problem(int line_no, std::string message) {
  return {"line " + std::to_string(line_no), std::move(message)};
}

void sort_by_line(std::vector<FieldError>& problems) {
  std::sort(problems.begin(), problems.end(), [](const auto& a, const auto& b) {
    return std::stoi(a.field.substr(5)) < std::stoi(b.field.substr(5));
  });
}

// number[,title] with one declared scheme, or number,scheme[,title]: a scheme per row.
// Whether the file has a scheme column.
Result<bool> legacy_header(const CsvLine& first, const LegacyImportOptions& options) {
  const auto& header = first.fields;
  const bool per_row = header.size() >= 2 && header[1] == "scheme";
  const size_t title_col = per_row ? 2 : 1;
  const bool header_ok = !header.empty() && header[0] == "number" &&
                         header.size() <= title_col + 1 &&
                         (header.size() <= title_col || header[title_col] == "title");
  if (!header_ok) {
    return invalid("line " + std::to_string(first.line_no),
                   "the header must be 'number[,title]' or 'number,scheme[,title]'");
  }
  if (per_row && options.scheme) {
    return invalid("scheme", "the file declares a scheme on every row: give no scheme as well");
  }
  if (!per_row && !options.scheme) {
    return invalid("scheme",
                   "declare the file's scheme (dec3, hex3, dec4), or add a scheme column");
  }
  return per_row;
}

// One row after the header, or what is wrong with it (its message).
Result<LegacyEntry> legacy_row(const CsvLine& l, std::size_t header_size, bool per_row,
                               const LegacyImportOptions& options) {
  const size_t title_col = per_row ? 2 : 1;
  if (l.fields.size() > header_size || (per_row && l.fields.size() < 2)) {
    return Status(Code::invalid_request,
                  fmt::format("has {} fields, the header has {}", l.fields.size(), header_size));
  }
  LegacyScheme row_scheme = options.scheme.value_or(LegacyScheme::dec3);
  if (per_row) {
    auto declared = parse_scheme(l.fields[1]);
    if (!declared.ok()) {
      return Status(Code::invalid_request,
                    "scheme '" + l.fields[1] + "' is not one of dec3, hex3, dec4");
    }
    row_scheme = *declared;
  }
  auto value = parse_legacy_number(l.fields[0], row_scheme);
  if (!value.ok()) return Status(Code::invalid_request, value.status().message());
  std::string title = l.fields.size() > title_col ? l.fields[title_col] : "";
  if (title.empty()) title = "legacy " + l.fields[0];
  if (auto p = title_problem(title)) return Status(Code::invalid_request, "title " + *p);
  return LegacyEntry{l.line_no, *value, l.fields[0], row_scheme, std::move(title)};
}

// The file's rows, and the lines whose values repeat an earlier line's (refused unless a dry
// run, which reports them).
Result<LegacyFile> read_legacy_file(const std::vector<CsvLine>& lines,
                                    const LegacyImportOptions& options) {
  if (lines.empty()) return invalid("file", "is empty: expected a header line 'number[,title]'");
  OO_ASSIGN_OR_RETURN(const bool per_row, legacy_header(lines.front(), options));
  const std::size_t header_size = lines.front().fields.size();
  LegacyFile file;
  std::vector<FieldError> errors;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto e = legacy_row(lines[i], header_size, per_row, options);
    if (!e.ok()) {
      errors.push_back(line_problem(lines[i].line_no, e.status().message()));
      continue;
    }
    if (auto [it, fresh] = file.first_line.emplace(e->value, e->line_no); !fresh) {
      e->collides = true;
      file.collisions.push_back(line_problem(
          e->line_no, fmt::format("'{}' ({}) is value {}, the same as line {}", e->number,
                                  scheme_name(e->scheme), e->value, it->second)));
    }
    file.entries.push_back(std::move(*e));
  }
  if (!errors.empty()) {
    return Status(Code::invalid_request, "the file has bad lines; nothing was imported",
                  std::move(errors));
  }
  if (file.entries.empty()) return invalid("file", "has no numbers after the header");
  if (!file.collisions.empty() && !options.dry_run) {
    return Status(Code::invalid_request, "the file has bad lines; nothing was imported",
                  std::move(file.collisions));
  }
  return file;
}

LegacyImportReport legacy_report(const LegacyImportOptions& options,
                                 const std::vector<LegacyEntry>& all, std::vector<FieldError> found,
                                 std::int64_t last_value) {
  LegacyImportReport r;
  r.dry_run = options.dry_run;
  r.last_value = last_value;
  std::map<std::string, LegacySchemeSummary> by_scheme;
  for (const LegacyEntry& e : all) {
    auto& sum = by_scheme[std::string(scheme_name(e.scheme))];
    sum.scheme = std::string(scheme_name(e.scheme));
    sum.min = sum.count == 0 ? e.value : std::min(sum.min, e.value);
    sum.max = std::max(sum.max, e.value);
    ++sum.count;
    if (e.collides) ++sum.collisions;
  }
  for (auto& [name, sum] : by_scheme) r.schemes.push_back(sum);
  r.collisions = std::move(found);
  sort_by_line(r.collisions);
  if (!options.dry_run) r.imported = static_cast<std::int64_t>(all.size());
  return r;
}

// The scope a legacy import goes into: read (a dry run; the defaults when it does not exist
// yet), or created if missing and locked.
struct LegacyScope {
  ScopeFormat format;
  std::int64_t last_value = 0;
};

Result<LegacyScope> legacy_scope(store::NumberingStore& store, Connection& c,
                                 std::string_view scope, bool dry_run) {
  LegacyScope out;
  if (dry_run) {
    OO_ASSIGN_OR_RETURN(auto info, store.scope_info(c, scope));
    if (info) out = {info->format, info->last_value};
    return out;
  }
  OO_RETURN_IF_ERROR(store.ensure_scope(c, scope, ScopeFormat{}));
  OO_ASSIGN_OR_RETURN(auto row, store.lock_scope(c, scope));
  if (!row) return Status(Code::internal, "scope vanished during import");
  return LegacyScope{row->format, row->last_value};
}

// The file's values against the scope: past its max, or used by a document already
// (`rows` and `found` marked for the report, `problems` for a refusal). The largest value.
Result<std::int64_t> reconcile_legacy(store::NumberingStore& store, Connection& c,
                                      std::string_view scope, const LegacyFile& file,
                                      const ScopeFormat& format, std::vector<LegacyEntry>& rows,
                                      std::vector<FieldError>& found,
                                      std::vector<FieldError>& problems) {
  std::vector<std::int64_t> values;
  std::int64_t largest = 0;
  for (const LegacyEntry& e : file.entries) {
    values.push_back(e.value);
    largest = std::max(largest, e.value);
    if (e.value > format.max) {
      problems.push_back(line_problem(
          e.line_no, fmt::format("value {} is past the scope's max {}", e.value, format.max)));
    }
  }
  OO_ASSIGN_OR_RETURN(auto taken, store.existing_values(c, scope, values));
  for (auto v : taken) {
    const std::string used =
        fmt::format("value {} is already used by a document in scope '{}'", v, scope);
    for (LegacyEntry& e : rows) {
      if (e.value != v || e.collides) continue;
      e.collides = true;
      found.push_back(line_problem(e.line_no, used));
    }
    const auto first = file.first_line.find(v);
    OO_INVARIANT(first != file.first_line.end(), "value {} the database found is not the file's",
                 v);
    problems.push_back(line_problem(first->second, used));
  }
  return largest;
}

}  // namespace

Numbering::Numbering(store::Database& db, NumberingOptions options)
    : db_(db),
      options_(std::move(options)),
      store_(std::make_unique<store::NumberingStore>(db.dialect())),
      combiner_(std::make_unique<Combiner<IssueRequest, LaneAnswer>>(
          kMaxBatch,
          [this](const IssueRequest& r, store::Clock::time_point d) -> LaneAnswer {
            auto done = issue_alone(r, d, /*in_lane=*/true);
            if (!done.ok()) return LaneAnswer(done.status());
            if (!*done) return std::nullopt;
            return LaneAnswer(std::move(**done));
          },
          [this](std::span<const IssueRequest> rs, store::Clock::time_point d) {
            return lane_batch(rs, d, /*wait=*/false);
          })),
      waiting_(std::make_unique<Combiner<IssueRequest, Result<Issued>>>(
          kMaxBatch,
          [this](const IssueRequest& r, store::Clock::time_point d) { return issue_waiting(r, d); },
          [this](std::span<const IssueRequest> rs, store::Clock::time_point d) {
            return completed(lane_batch(rs, d, /*wait=*/true), rs,
                             [&](const IssueRequest& r) { return issue_waiting(r, d); });
          })) {}

Numbering::~Numbering() = default;

CombinerStats Numbering::combining() const { return combiner_->stats(); }

Result<Issued> Numbering::issue(const IssueRequest& req, store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(validate_issue_request(req));
  if (options_.fault_after_allocate) return issue_one(req, deadline);
  // One lane for every scope: whatever queues is combined, whatever its scope; more traffic
  // makes bigger batches (up to kMaxBatch), not more of them: lanes by scope would rarely
  // combine, and a combined batch is what saves commits. Seed 003 still holds: different scopes
  // never wait for each other, because nothing in the lane waits for a counter another transaction
  // holds. A request whose counter is held comes back unanswered and waits in its scope's
  // waiting lane, where its wait holds up only that scope.
  auto answer = combiner_->run({}, req, deadline);
  if (!answer) return waited_out();
  if (!*answer) return issue_handed_back(req, deadline);
  return std::move(**answer);
}

Result<Issued> Numbering::issue_handed_back(const IssueRequest& req,
                                            store::Clock::time_point deadline) {
  // The requests a lane handed back wait in a lane of their scope: one transaction of the
  // process at a time waits for the counter (or creates the scope), the rest queue here and
  // go as one batch when it ends. Were each to wait on the counter's row lock itself, the
  // queue on that lock would hold the counter one request after another, so that the lane
  // missed it again and handed back the next requests, which queued in turn: a hot scope
  // would commit one request at a time.
  auto answer = waiting_->run(req.scope, req, deadline);
  if (!answer) return waited_out();
  return std::move(*answer);
}

Result<Issued> Numbering::issue_waiting(const IssueRequest& req,
                                        store::Clock::time_point deadline) {
  // First as the lane's lone request would have run (the same statements, so the same
  // answer, errors included), then, if its counter is still held or its scope new, the
  // waiting upsert.
  OO_ASSIGN_OR_RETURN(auto done, issue_alone(req, deadline, /*in_lane=*/true));
  if (done) return std::move(*done);
  return issue_one(req, deadline);
}

Result<Issued> Numbering::issue_one(const IssueRequest& req, store::Clock::time_point deadline) {
  OO_ASSIGN_OR_RETURN(auto done, issue_alone(req, deadline, /*in_lane=*/false));
  if (!done) return Status(Code::internal, "a request alone was not issued");
  return std::move(*done);
}

Result<std::optional<Issued>> Numbering::issue_alone(const IssueRequest& req,
                                                     store::Clock::time_point deadline,
                                                     bool in_lane) {
  // The last statement carries the commit (one round trip) unless a test needs a moment
  // between allocation and commit.
  const Then last = options_.fault_after_allocate ? Then::stay : Then::commit;
  using Out = std::optional<Issued>;
  return store::transact<Out>(db_, write_tx(deadline), [&](Connection& c) -> Result<Out> {
    if (req.idempotency_key) {
      OO_ASSIGN_OR_RETURN(auto receipt, store_->find_receipt(c, req.scope, *req.idempotency_key));
      if (receipt) {
        OO_ASSIGN_OR_RETURN(auto replayed, replay_or_refuse(*receipt, req));
        return Out(std::move(replayed));
      }
    }
    const Then then = req.idempotency_key ? Then::stay : last;
    const store::NewDocument wanted{req.title, req.principal, req.header, req.lines};
    OO_ASSIGN_OR_RETURN(auto doc, in_lane ? store_->allocate_if_free(c, req.scope, wanted, then)
                                          : store_->allocate(c, req.scope, wanted, then));
    if (!doc) {
      // Full, or (in the lane) held elsewhere or new. A full scope is answered here from the
      // counter as it is, unlocked: a request that writes nothing needs no lock and no WAL
      // flush, and waits for no holder. The rest go out of the lane (nothing was written).
      OO_ASSIGN_OR_RETURN(auto row, store_->read_scope(c, req.scope));
      if (row && row->last_value >= row->format.max)
        return scope_exhausted(req.scope, row->format.max);
      if (in_lane) return Out();
      return scope_exhausted(req.scope, row ? row->format.max : 0);
    }
    if (options_.fault_after_allocate) OO_RETURN_IF_ERROR(options_.fault_after_allocate());
    if (req.idempotency_key) {
      Status st =
          store_->insert_receipt(c, req.scope, *req.idempotency_key, req.title, doc->value, last);
      // Another request with this key committed first: run again, which replays it.
      if (st.code() == Code::unique_violation)
        return Status(Code::retry_transaction, "idempotency key taken concurrently");
      OO_RETURN_IF_ERROR(st);
    }
    return Out(Issued{std::move(*doc), false});
  });
}

std::vector<Numbering::LaneAnswer> Numbering::lane_batch(std::span<const IssueRequest> reqs,
                                                         store::Clock::time_point deadline,
                                                         bool wait) {
  std::vector<LaneAnswer> out(reqs.size());
  // The valid requests by scope, each scope's in arrival order; scopes in name order, the one
  // order in which a batch locks counters.
  std::map<std::string_view, std::vector<std::size_t>> by_scope;
  std::vector<std::size_t> valid;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    if (Status st = validate_issue_request(reqs[i]); !st.ok()) {
      out[i] = LaneAnswer(std::move(st));
    } else {
      by_scope[reqs[i].scope].push_back(i);
      valid.push_back(i);
    }
  }
  if (by_scope.empty()) return out;
  struct Decided {
    BatchAnswers answers;
    std::vector<std::size_t> handed_back;
  };
  auto decided =
      store::transact<Decided>(db_, write_tx(deadline), [&](Connection& c) -> Result<Decided> {
        Decided d;
        OO_RETURN_IF_ERROR(
            issue_scopes(*store_, c, reqs, by_scope, wait, d.answers, d.handed_back));
        return d;
      });
  if (decided.ok()) {
    // The handed-back requests keep their nullopt.
    for (auto& [i, answer] : decided->answers) out[i] = LaneAnswer(std::move(answer));
    return out;
  }
  // Busy stays busy (each alone would have met the same contention). Unavailable stays
  // unavailable: the connection was lost, maybe after the COMMIT went out, so the batch may
  // have committed, and a request without a key run again would be numbered twice (a
  // fail-over did it in the torture run). Anything else may be one request's own trouble:
  // each runs alone, outside the lane, and gets its own answer.
  if (decided.status().code() == Code::busy || decided.status().code() == Code::unavailable) {
    for (std::size_t i : valid) out[i] = LaneAnswer(decided.status());
  }
  return out;
}

std::vector<Result<Issued>> Numbering::issue_batch(std::span<const IssueRequest> reqs,
                                                   store::Clock::time_point deadline) {
  return completed(lane_batch(reqs, deadline, /*wait=*/false), reqs,
                   [&](const IssueRequest& r) { return issue_handed_back(r, deadline); });
}

Result<Numbering::Configured> Numbering::configure(std::string_view scope,
                                                   const ScopeFormat& format,
                                                   store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_scope_name(scope));
  OO_RETURN_IF_ERROR(validate_scope_format(format));
  return store::transact<Configured>(
      db_, write_tx(deadline), [&](Connection& c) -> Result<Configured> {
        // The counter's row first, locked: no number can be issued in the scope until this
        // transaction ends, and the next statement's snapshot sees every document issued
        // before. The rules themselves are upsert_format's own WHERE, not a check here between
        // a read and the write: when the scope did not exist there was no row to lock, and a
        // first number may create it and commit in between (the write would then meet that row
        // with a snapshot older than its documents). The statement refuses a row it was not
        // told was locked, and the transaction runs again, this time locking it.
        OO_ASSIGN_OR_RETURN(auto row, store_->lock_scope(c, scope));
        OO_ASSIGN_OR_RETURN(bool written, store_->upsert_format(c, scope, format, row.has_value()));
        if (!written) {
          if (!row) return Status(Code::retry_transaction, "scope created concurrently");
          return format_refused(*store_, c, scope, format);
        }
        OO_ASSIGN_OR_RETURN(auto info, store_->scope_info(c, scope));
        if (!info) return Status(Code::internal, "scope vanished while configuring it");
        return Configured{std::move(*info), !row.has_value()};
      });
}

Result<ScopeInfo> Numbering::scope(std::string_view scope, store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_scope_name(scope));
  return store::transact<ScopeInfo>(
      db_, read_tx(deadline), [&](Connection& c) -> Result<ScopeInfo> {
        OO_ASSIGN_OR_RETURN(auto info, store_->scope_info(c, scope));
        if (!info)
          return Status(Code::not_found, fmt::format("scope '{}' has no documents yet", scope));
        return std::move(*info);
      });
}

Result<Document> Numbering::get(std::string_view scope, std::int64_t value,
                                store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_scope_name(scope));
  return store::transact<Document>(db_, read_tx(deadline), [&](Connection& c) -> Result<Document> {
    OO_ASSIGN_OR_RETURN(auto doc, store_->get_document(c, scope, value));
    if (!doc)
      return Status(Code::not_found, fmt::format("scope '{}' has no document {}", scope, value));
    return std::move(*doc);
  });
}

Result<DocumentPage> Numbering::list(std::string_view scope, std::int64_t after, int limit,
                                     store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_scope_name(scope));
  if (limit < 1 || limit > kMaxListLimit)
    return invalid("limit", fmt::format("must be an integer from 1 to {}", kMaxListLimit));
  if (after < 0) return invalid("after", "must be a value ≥ 0");
  return store::transact<DocumentPage>(
      db_, read_tx(deadline), [&](Connection& c) -> Result<DocumentPage> {
        OO_ASSIGN_OR_RETURN(auto info, store_->scope_info(c, scope));
        if (!info)
          return Status(Code::not_found, fmt::format("scope '{}' has no documents yet", scope));
        OO_ASSIGN_OR_RETURN(auto docs, store_->list(c, scope, after, limit));
        DocumentPage page;
        if (static_cast<int>(docs.size()) == limit) page.next_after = docs.back().value;
        page.documents = std::move(docs);
        return page;
      });
}

Result<LegacyImportReport> Numbering::import_legacy(std::string_view scope, LegacyScheme scheme,
                                                    std::string_view csv,
                                                    store::Clock::time_point deadline) {
  return import_legacy(scope, LegacyImportOptions{scheme, false, {}}, csv, deadline);
}

Result<LegacyImportReport> Numbering::import_legacy(std::string_view scope,
                                                    const LegacyImportOptions& options,
                                                    std::string_view csv,
                                                    store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_scope_name(scope));
  OO_ASSIGN_OR_RETURN(auto lines, parse_csv(csv));
  OO_ASSIGN_OR_RETURN(const LegacyFile file, read_legacy_file(lines, options));
  return store::transact<LegacyImportReport>(
      db_, TxOptions{deadline, 3, options.dry_run ? store::TxMode::read : store::TxMode::write},
      [&](Connection& c) -> Result<LegacyImportReport> {
        OO_ASSIGN_OR_RETURN(const LegacyScope state,
                            legacy_scope(*store_, c, scope, options.dry_run));
        // Copies: a retried transaction starts from the file's own findings again.
        std::vector<LegacyEntry> rows = file.entries;
        std::vector<FieldError> found = file.collisions;
        std::vector<FieldError> problems;
        OO_ASSIGN_OR_RETURN(
            const std::int64_t largest,
            reconcile_legacy(*store_, c, scope, file, state.format, rows, found, problems));
        if (options.dry_run) {
          for (auto& p : problems)
            if (p.message.find("past the scope's max") != std::string::npos) found.push_back(p);
          return legacy_report(options, rows, std::move(found),
                               std::max(largest, state.last_value));
        }
        if (!problems.empty()) {
          sort_by_line(problems);
          return Status(Code::scope_conflict,
                        "the file collides with the scope; nothing was imported",
                        std::move(problems));
        }
        const auto total = static_cast<std::int64_t>(file.entries.size());
        std::int64_t done = 0;
        for (const LegacyEntry& e : file.entries) {
          OO_RETURN_IF_ERROR(store_->insert_legacy(
              c, scope, e.value, e.number, scheme_name(e.scheme), e.title, kLegacyImportPrincipal));
          if (options.progress) options.progress({++done, total});
        }
        OO_RETURN_IF_ERROR(store_->raise_last_value(c, scope, largest));
        return legacy_report(options, rows, {}, std::max(largest, state.last_value));
      });
}

}  // namespace onceorder
