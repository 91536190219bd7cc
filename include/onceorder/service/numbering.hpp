// Gapless per-scope document numbers (seed 003). A number is taken from the scope's
// counter row and used by the document insert in the same transaction, and returned only
// after that transaction committed: a rollback leaves no gap, two callers never share a
// number, and different scopes never wait for each other.
//
// Requests that queue up behind each other are combined (onceorder/core/combiner.hpp), in one lane
// for every scope: they run as one transaction that takes each counter once and writes their
// documents and receipts together, one commit flush for all, each answered as if they had run
// one at a time. A lone request runs at once on its caller's thread, as one statement. The
// combining lane never waits for a counter another transaction holds (a production run, a
// `configure`, another process): such a request leaves the lane and waits alone.
//
// Thread-safety: a Numbering is safe to use from many threads at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/combiner.hpp"
#include "onceorder/core/document_types.hpp"
#include "onceorder/core/limits.hpp"
#include "onceorder/core/number_format.hpp"
#include "onceorder/core/principal.hpp"
#include "onceorder/core/progress.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

struct IssueRequest {
  std::string scope;
  std::string title;
  std::optional<std::string> idempotency_key;
  std::string principal{kInProcessPrincipal};  // recorded with the document
  // The body (Document::header, Document::lines: canonical JSON text, empty for none),
  // stored in the number's transaction. With the title, what a key's replay must match.
  std::string header{};
  std::string lines{};
};

struct Issued {
  Document document;
  bool replayed = false;  // an earlier request with the same key made it
};

struct DocumentPage {
  std::vector<Document> documents;
  std::optional<std::int64_t> next_after;  // pass as `after` for the next page
};

// What a legacy file holds per scheme, for the reconciliation report.
struct LegacySchemeSummary {
  std::string scheme;  // dec3 | hex3 | dec4
  std::int64_t count = 0;
  std::int64_t min = 0;  // values, not the numbers as written
  std::int64_t max = 0;
  std::int64_t collisions = 0;  // lines whose value another line or a document already has
};

struct LegacyImportReport {
  std::int64_t imported = 0;    // 0 on a dry run
  std::int64_t last_value = 0;  // the scope's counter after the import (as it would be)
  std::vector<LegacySchemeSummary> schemes;
  std::vector<FieldError> collisions;  // "line N": what a real import refuses
  bool dry_run = false;
};

struct LegacyImportOptions {
  // The scheme of every number in a file without a `scheme` column; a file with one
  // declares it per row (a mixed history), and then this must be empty. Never guessed.
  std::optional<LegacyScheme> scheme;
  // Reads and reconciles, writes nothing: the report says what an import would do.
  bool dry_run = false;
  // Counts documents written (a real import only).
  ProgressFn progress = {};
};

struct NumberingOptions {
  // Test seam: called inside the transaction after the counter moved and the document was
  // inserted, before commit. A non-ok Status rolls everything back. While it is set, `issue`
  // does not combine: every request runs alone, so the seam sees one request at a time.
  std::function<Status()> fault_after_allocate;
};

namespace store {
class NumberingStore;
}

class Numbering {
 public:
  Numbering(store::Database& db, NumberingOptions options = {});
  ~Numbering();

  // Issues the next number of `request.scope` (created with the default format on first
  // use). Errors: invalid_request (field errors), scope_exhausted, idempotency_key_reused,
  // busy. Combined with other requests for the same scope when they queue (see above).
  Result<Issued> issue(const IssueRequest& request, store::Clock::time_point deadline);

  // Issues `requests` in one transaction, each answered exactly as `issue` would have
  // answered it had they run one at a time in this order (numbers, replays of keys stored or
  // used earlier in the batch, idempotency_key_reused, scope_exhausted from the first request
  // that finds its scope full). Invalid requests get their validation error and take no part.
  // Every scope's counter is locked at once, skipping those another transaction holds: the
  // requests of those scopes (and of scopes used for the first time) run afterwards, in
  // order, in their scope's waiting lane, as `issue` runs a request the lane handed back. If the
  // transaction fails as `busy` or `unavailable` (the batch may have committed), every request
  // gets that answer; if it fails for any other reason, each request is run alone instead, so
  // one bad request cannot sink the others. `issue` runs the
  // same for what queued; tests call it to force a batch.
  std::vector<Result<Issued>> issue_batch(std::span<const IssueRequest> requests,
                                          store::Clock::time_point deadline);

  // The most requests one combined transaction takes (limits.hpp).
  static constexpr std::size_t kMaxBatch = kMaxCombinedBatch;
  // How many requests `issue`'s runs carried so far (a lone request is a batch of 1).
  CombinerStats combining() const;

  struct Configured {
    ScopeInfo info;
    bool created = false;
  };
  // Sets width / radix / max. scope_conflict when max is below a value already used, or when
  // width or radix would change after the scope issued a number (its numbers keep one look).
  Result<Configured> configure(std::string_view scope, const ScopeFormat& format,
                               store::Clock::time_point deadline);

  Result<ScopeInfo> scope(std::string_view scope, store::Clock::time_point deadline);
  // One document with its body; not_found when the scope has no document of that value.
  Result<Document> get(std::string_view scope, std::int64_t value,
                       store::Clock::time_point deadline);
  Result<DocumentPage> list(std::string_view scope, std::int64_t after, int limit,
                            store::Clock::time_point deadline);

  // Imports a legacy CSV (`number[,title]` with a header line). Every line is checked
  // first; any bad line, any collision with an existing document or any value past the
  // scope's max rejects the whole file (field errors name the line) and writes nothing.
  Result<LegacyImportReport> import_legacy(std::string_view scope,
                                           const LegacyImportOptions& options, std::string_view csv,
                                           store::Clock::time_point deadline);
  Result<LegacyImportReport> import_legacy(std::string_view scope, LegacyScheme scheme,
                                           std::string_view csv, store::Clock::time_point deadline);

 private:
  // What the combining lane did for a request: its answer, or nullopt when its counter is
  // held by another transaction (or its scope does not exist yet). Nothing was written for it
  // then; it waits in its scope's waiting lane, where a wait holds up no other scope.
  using LaneAnswer = std::optional<Result<Issued>>;

  // One request in its own transaction, waiting for its counter: the waiting lane's last
  // step, and the path of every request while the test seam is set.
  Result<Issued> issue_one(const IssueRequest& request, store::Clock::time_point deadline);
  // A request the lane handed back (nullopt), run in its scope's waiting lane.
  Result<Issued> issue_handed_back(const IssueRequest& request, store::Clock::time_point deadline);
  // The waiting lane's lone request: the lane's statement again, then issue_one's.
  Result<Issued> issue_waiting(const IssueRequest& request, store::Clock::time_point deadline);
  // issue_one's work; `in_lane`: the lane's lone request, which never waits for a held
  // counter (nullopt instead).
  Result<std::optional<Issued>> issue_alone(const IssueRequest& request,
                                            store::Clock::time_point deadline, bool in_lane);
  // issue_batch's transaction. In the lane (`wait` false) no request waits for a held counter
  // or creates a scope (nullopt instead); in a waiting lane (`wait`) every one does, and
  // nullopt means: run it alone (the batch failed other than as busy).
  std::vector<LaneAnswer> lane_batch(std::span<const IssueRequest> requests,
                                     store::Clock::time_point deadline, bool wait);

  store::Database& db_;
  NumberingOptions options_;
  std::unique_ptr<store::NumberingStore> store_;
  std::unique_ptr<Combiner<IssueRequest, LaneAnswer>> combiner_;  // one lane for every scope
  // A lane per scope for the requests combiner_ handed back, whose runs wait for the counter.
  std::unique_ptr<Combiner<IssueRequest, Result<Issued>>> waiting_;
};

// Field validation shared with the HTTP layer (also used by tests).
Status validate_issue_request(const IssueRequest& request);
bool is_valid_idempotency_key(std::string_view key);
// Why `title` is not a document title (text_problem, then 1–200 characters), or nullopt.
std::optional<std::string> title_problem(std::string_view title);

}  // namespace onceorder
