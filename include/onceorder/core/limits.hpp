// Every explicit limit of OnceOrder in one place: what one request may ask for, what one
// transaction takes, what memory holds. Each says why it is what it is; the static_asserts at
// the end say how they depend on each other, so a change that breaks a relation fails to
// compile. A message that names a limit prints it from here (fmt), never as a literal.
// Pure constants, no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace onceorder {

namespace limits_detail {
constexpr std::int64_t pow10(int n) { return n == 0 ? 1 : 10 * pow10(n - 1); }
}  // namespace limits_detail

// ---- Identifiers.

// The largest id a path, query or body may name (ids are positive 64-bit integers).
inline constexpr std::int64_t kMaxId = std::numeric_limits<std::int64_t>::max();

// ---- Names and keys: what a log line, a metric label or a URL segment holds whole.

// A document scope's name (core/number_format's is_valid_scope_name).
inline constexpr std::size_t kMaxScopeName = 64;
// A principal's name in the tokens file.
inline constexpr std::size_t kMaxPrincipalName = 64;
// An Idempotency-Key header's value (RFC draft's advice: a UUID or similar, well within it).
inline constexpr std::size_t kMaxIdempotencyKey = 255;
// A document's title, in characters.
inline constexpr std::size_t kMaxTitle = 200;
// The parts of a source order's key (SITE ORDER LOT); a site code also names a scope.
inline constexpr std::size_t kMaxSiteCode = 32;
inline constexpr std::size_t kMaxOrderNo = 64;
inline constexpr std::size_t kMaxLotNo = 32;
// The longest of them: what a query filter on any part reads.
inline constexpr std::size_t kMaxOrderKeyPart = kMaxOrderNo;

// ---- Money and stock (API.md "Stock bounds").

// A price, a stock level and one adjustment are each at most 10^kStockBoundPower: far above any
// real price or stock, and low enough that neither a line's total nor stock plus an adjustment
// can wrap (asserted below). Messages print the bound as "10^12".
inline constexpr int kStockBoundPower = 12;
inline constexpr std::int64_t kStockBound = limits_detail::pow10(kStockBoundPower);

// ---- Carts (seed 004).

// SKUs in one cart after merging: the stock rows one placement locks, kept few so that its
// locks are held briefly and a combined batch stays small.
inline constexpr int kMaxCartSkus = 20;
// One line's quantity: a customer's order, not a warehouse transfer.
inline constexpr std::int64_t kMaxLineQuantity = 1'000'000;

// ---- Combined transactions.

// The most requests one combined transaction takes (placements, or document numbers of one
// scope). The HTTP server runs 4 workers per database connection, so a process rarely queues
// more; the bound keeps one statement's arrays, and the time its rows are held, small.
inline constexpr std::size_t kMaxCombinedBatch = 64;
// How often a placement a batch handed back for a held stock row queues in its lane again
// before it runs alone and waits for the row: enough to ride out a neighbour's commit, few
// enough that a hot row does not starve it.
inline constexpr int kLaneRetries = 8;
// Stock rows remembered as this process's placements last left them (deciding ahead): a
// bound on memory, not a policy; rows are known again after one batch reads them.
inline constexpr std::size_t kMaxKnownRows = std::size_t{1} << 16;

// ---- Source orders and runs.

// One source order's quantity: a production lot, counted in pieces.
inline constexpr std::int64_t kMaxSourceQuantity = 1'000'000'000;
// Orders one request may name (`POST /v1/source-orders`, `POST /v1/schedule/runs`): one bound
// for the work one request may ask for.
inline constexpr std::size_t kMaxOrdersPerRequest = 10000;

// ---- Documents (seed 003).

// A document's body commits with its number in one transaction: at most this many lines, this
// many bytes of request body in all, and this deep a JSON value in its header or lines.
inline constexpr std::size_t kMaxDocumentLines = 500;
inline constexpr std::size_t kMaxDocumentBodyBytes = 256 * 1024;
inline constexpr int kMaxDocumentBodyDepth = 8;

// ---- Requests and lists.

// Field errors one answer lists: a client learns every problem of a request at once, and a
// hostile body cannot turn into a huge answer.
inline constexpr std::size_t kMaxFieldErrors = 50;
// How deep a JSON request body may nest: no request of the API nests beyond a few levels, and a
// bound keeps hostile bodies cheap.
inline constexpr int kMaxJsonDepth = 32;

// A request body the server reads by default (ServerOptions::body_limit): room for the largest
// document with its JSON framing.
inline constexpr std::size_t kDefaultBodyLimit = 1024 * 1024;
// Rows one page of a list returns (`limit`), and by default: a page is one query's answer, held
// in memory and written as one response.
inline constexpr int kMaxListLimit = 1000;
inline constexpr int kDefaultListLimit = 100;
// The most minutes GET /v1/stats/activity covers: one day, a chart's width.
inline constexpr int kMaxActivityMinutes = 1440;

// ---- Monitoring (/metrics).

// Exhausted orders the capacity gauge counts: one page of GET /v1/schedule/exhausted, read by
// the monitor in one query.
inline constexpr int kExhaustedCap = kMaxListLimit;
// Scopes whose last number /metrics shows: those nearest their max, each a metric label.
inline constexpr int kFullestScopes = 20;

// ---- The outbox (docs/EVENTS.md).

struct EventLimits {
  static constexpr int kFeedPage = 1000;        // most events one feed read returns
  static constexpr int kFeedDefaultPage = 100;  // events a feed read returns by default
  static constexpr int kMaxWaitSeconds = 30;    // longest long poll
  static constexpr int kMaxEndpoints = 64;      // endpoints (each a metric label)
  static constexpr int kMaxConsumers = 64;      // named consumers (each a metric label)
  static constexpr std::size_t kMaxName = 64;   // a consumer's or an endpoint's name
  static constexpr int kMaxAttempts = 100;      // an endpoint's max_attempts
  static constexpr int kMaxBackoffSeconds = 86400;
  static constexpr std::size_t kMinSecret = 16;  // an endpoint's secret, in bytes
  static constexpr std::size_t kMaxSecret = 256;
  static constexpr std::size_t kMaxUrl = 2048;
  static constexpr int kMaxRedeliver = 1000;                   // event ids one redeliver takes
  static constexpr std::int64_t kMaxBackoffCapSeconds = 3600;  // a retry waits at most this
};

// ---- How they relate.

// A site code names a scope ("PO-<site>"), and a query filter reads any key part whole.
static_assert(kMaxSiteCode + 3 <= kMaxScopeName);
static_assert(kMaxSiteCode <= kMaxOrderKeyPart && kMaxLotNo <= kMaxOrderKeyPart);

// One line's total (price × quantity) fits in 64 bits; only a sum of lines can overflow, and
// placement checks that sum.
static_assert(kStockBound <= std::numeric_limits<std::int64_t>::max() / kMaxLineQuantity);
// Stock plus one adjustment never wraps before the bound refuses it.
static_assert(kStockBound <= std::numeric_limits<std::int64_t>::max() - kStockBound);
// A combined batch of the largest carts fits in the memory of known rows, so remembering one
// batch never forgets the batch itself.
static_assert(kMaxCombinedBatch * kMaxCartSkus <= kMaxKnownRows);
// A document body nests within what any JSON body may.
static_assert(kMaxDocumentBodyDepth <= kMaxJsonDepth);
// The largest document body is a request the server reads by default.
static_assert(kMaxDocumentBodyBytes < kDefaultBodyLimit);
// A list's default page is within its limit, and so is the feed's.
static_assert(kDefaultListLimit <= kMaxListLimit);
static_assert(EventLimits::kFeedDefaultPage <= EventLimits::kFeedPage);
// A redeliver takes at most one feed page of event ids.
static_assert(EventLimits::kMaxRedeliver <= EventLimits::kFeedPage);

}  // namespace onceorder
