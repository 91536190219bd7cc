// SQL for document numbers: one engine-neutral class over a per-engine set of statements
// (store/<engine>/numbering_sql.cpp). Methods run inside the caller's transaction.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "onceorder/document_types.hpp"
#include "onceorder/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct NumberingSql {
  store::Statement find_receipt;       // (scope, key) → receipt title + document
  store::Statement bump_counter = {};  // (scope): the counter step, sent first unless
                                       // Dialect::writes_in_one_statement
  store::Statement insert_issued;      // (scope, title) → document; no row when exhausted
  store::Statement insert_receipt;     // (scope, key, title, value)
  store::Statement lock_scope;         // (scope) → width, radix, max, last_value (row locked)
  store::Statement read_scope;         // (scope) → width, radix, max, last_value (no lock)
  store::Statement upsert_format;      // (scope, width, radix, max)
  store::Statement ensure_scope;       // (scope) created with defaults if missing
  store::Statement scope_info;       // (scope) → scope, width, radix, max, last, issued, imported
  store::Statement list_documents;   // (scope, after, limit) → documents
  store::Statement existing_values;  // (scope, "v1,v2,…") → values already used
  store::Statement insert_legacy;    // (scope, value, number, scheme, title)
  store::Statement raise_last;       // (scope, value) last_value = max(last_value, value)
  // A batch (Numbering::issue_batch): every receipt of a list of keys, in one statement.
  store::Statement find_receipts;  // (scope, keys JSON array) → key, title + document
  // (scope, last, new last, titles JSON array, receipts JSON array of [key, title, value]):
  // sets the counter to `new last` and inserts documents last+1… with those titles → the
  // documents. With Dialect::writes_in_one_statement the receipts go in the same statement;
  // otherwise `set_counter` comes first, then this with (scope, last, titles), then
  // `insert_receipts`.
  store::Statement insert_many;
  store::Statement set_counter = {};      // (scope, new last)
  store::Statement insert_receipts = {};  // (scope, receipts JSON array of [key, title, value])
  // Where the engine has row locks (PostgreSQL), the combining lane never waits for a counter
  // another transaction holds: these skip it instead. Empty elsewhere, where the lane holds
  // the database's one write lock and nothing else can hold a counter.
  // (scope, title) → document, as insert_issued; no row also when the counter is held
  // elsewhere or the scope does not exist yet.
  store::Statement insert_if_free = {};
  // (scopes JSON array) → scope, width, radix, max, last_value of those found and not held
  // elsewhere, locked in the statement's own order; a full counter (last_value = max) comes
  // back unlocked, held or not.
  store::Statement lock_scopes = {};
  // (counters JSON array of [scope, new last], documents JSON array of [scope, value, title],
  // receipts JSON array of [scope, key, title, value]) → the documents: a batch over several
  // scopes in one statement.
  store::Statement insert_scopes = {};
};

struct ScopeRow {
  ScopeFormat format;
  std::int64_t last_value = 0;
};

struct DocumentReceipt {
  std::string title;
  Document document;
};

// A receipt to write with a batch's documents.
struct NewReceipt {
  std::string_view key;
  std::string_view title;
  std::int64_t value = 0;
};

// What a batch writes in one scope: the counter moves from `last` (read under lock) by one per
// title, and the documents last+1… get those titles, in order.
struct ScopeWrite {
  std::string_view scope;
  std::int64_t last = 0;
  std::vector<std::string_view> titles;
  std::vector<NewReceipt> receipts;
};

class NumberingStore {
 public:
  explicit NumberingStore(const Dialect& dialect);
  Result<std::optional<DocumentReceipt>> find_receipt(store::Connection& c, std::string_view scope,
                                                      std::string_view key);
  // Takes the next value and inserts the document: nullopt when the scope is exhausted.
  Result<std::optional<Document>> allocate(store::Connection& c, std::string_view scope,
                                           std::string_view title, store::Then then);
  // allocate, except that it never waits for a counter another transaction holds: nullopt
  // also when the counter is held elsewhere or the scope does not exist yet (where the engine
  // has no row locks, exactly allocate).
  Result<std::optional<Document>> allocate_if_free(store::Connection& c, std::string_view scope,
                                                   std::string_view title, store::Then then);
  Status insert_receipt(store::Connection& c, std::string_view scope, std::string_view key,
                        std::string_view title, std::int64_t value, store::Then then);
  // The receipts of those of `keys` that have one, keyed by idempotency key.
  Result<std::map<std::string, DocumentReceipt, std::less<>>> find_receipts(
      store::Connection& c, std::string_view scope, std::span<const std::string_view> keys);
  // Moves the counter from `last` (read under lock) to last + titles.size() and inserts one
  // document per title (values last+1…, in order) and `receipts`: the documents in value
  // order. The caller checked the scope's max.
  Result<std::vector<Document>> allocate_many(store::Connection& c, std::string_view scope,
                                              std::int64_t last,
                                              std::span<const std::string_view> titles,
                                              std::span<const NewReceipt> receipts,
                                              store::Then then);
  // The writes of a batch over several scopes (each scope once): one statement where the
  // engine has one for it, else allocate_many per scope. The documents per write, in value
  // order.
  Result<std::vector<std::vector<Document>>> allocate_scopes(store::Connection& c,
                                                             std::span<const ScopeWrite> writes,
                                                             store::Then then);
  Result<std::optional<ScopeRow>> lock_scope(store::Connection& c, std::string_view scope);
  // The counter as the statement's snapshot sees it, without locking it.
  Result<std::optional<ScopeRow>> read_scope(store::Connection& c, std::string_view scope);
  // The counters of `scopes` (distinct) that exist, locked, by scope. Where the engine has
  // row locks, one statement that skips a counter another transaction holds (it is missing
  // from the answer, like a scope that does not exist) instead of waiting for it. A full
  // counter is read, not locked: it answers every request of its scope with scope_exhausted
  // and writes nothing, so it needs no lock (and a transaction that locks nothing commits
  // without a WAL flush).
  Result<std::map<std::string, ScopeRow, std::less<>>> lock_scopes_if_free(
      store::Connection& c, std::span<const std::string_view> scopes);
  Status upsert_format(store::Connection& c, std::string_view scope, const ScopeFormat& f);
  // Creates the scope with `format` if it does not exist yet (an existing one is kept).
  Status ensure_scope(store::Connection& c, std::string_view scope, const ScopeFormat& format);
  Result<std::optional<ScopeInfo>> scope_info(store::Connection& c, std::string_view scope);
  Result<std::vector<Document>> list(store::Connection& c, std::string_view scope,
                                     std::int64_t after, int limit);
  Result<std::vector<std::int64_t>> existing_values(store::Connection& c, std::string_view scope,
                                                    std::span<const std::int64_t> values);
  Status insert_legacy(store::Connection& c, std::string_view scope, std::int64_t value,
                       std::string_view number, std::string_view scheme, std::string_view title);
  Status raise_last_value(store::Connection& c, std::string_view scope, std::int64_t value);

 private:
  // (scope) → width, radix, max, last_value by `statement`.
  Result<std::optional<ScopeRow>> scope_row(store::Connection& c, const store::Statement& statement,
                                            std::string_view scope);

  const Dialect& dialect_;
  const NumberingSql& sql_;
};

}  // namespace onceorder::store
