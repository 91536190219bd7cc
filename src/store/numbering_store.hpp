// SQL for document numbers: one engine-neutral class over a per-engine set of statements
// (store/<engine>/numbering.sql) and operations (NumberingOps, below). Methods run inside the
// caller's transaction.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "onceorder/core/document_types.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

// The statements both engines have, which the shared store runs. Statements name a document's
// columns in one order: scope, value, number, origin, scheme, title, created_at, principal,
// header — and, where they read a stored document (not one they write), its lines as one JSON
// array text (NULL for none) after them (numbering_rows below).
struct NumberingSql {
  store::Statement find_receipt;    // (scope, key) → receipt title + document
  store::Statement insert_receipt;  // (scope, key, title, value)
  store::Statement lock_scope;      // (scope) → width, radix, max, last_value (row locked)
  store::Statement read_scope;      // (scope) → width, radix, max, last_value (no lock)
  // (scope, width, radix, max, 1 when the caller found the row locked, else 0) → scope when
  // written; no row when refused: width or radix changed after a number was issued, max below
  // the counter, or a row that appeared after the caller found none.
  store::Statement upsert_format;
  store::Statement ensure_scope;     // (scope) created with defaults if missing
  store::Statement scope_info;       // (scope) → scope, width, radix, max, last, issued, imported
  store::Statement list_documents;   // (scope, after, limit) → documents
  store::Statement get_document;     // (scope, value) → document
  store::Statement existing_values;  // (scope, "v1,v2,…") → values already used
  store::Statement insert_legacy;    // (scope, value, number, scheme, title, principal)
  store::Statement raise_last;       // (scope, value) last_value = max(last_value, value)
  // A batch (Numbering::issue_batch): every receipt of a list of keys, in one statement.
  store::Statement find_receipts;  // (scope, keys JSON array) → key, title + document
};

struct ScopeRow {
  ScopeFormat format;
  std::int64_t last_value = 0;
};

struct DocumentReceipt {
  std::string title;
  Document document;
};

// A document to issue: its title, the principal it records (onceorder/core/principal.hpp) and its
// body (Document::header, Document::lines; empty for none).
struct NewDocument {
  std::string_view title;
  std::string_view principal;
  std::string_view header = {};
  std::string_view lines = {};
};

// A receipt to write with a batch's documents.
struct NewReceipt {
  std::string_view key;
  std::string_view title;
  std::int64_t value = 0;
};

// What a batch asks of one scope before its counter is read: these new documents, in order,
// and a receipt for some of them (the key, and the document's place in `docs`).
struct ScopeClaim {
  struct Receipt {
    std::string_view key;
    std::size_t ordinal = 0;  // from 0
  };
  std::string_view scope;
  std::vector<NewDocument> docs;
  std::vector<Receipt> receipts;
};

// What a claim found and wrote: the counter before it, and the documents of the first
// min(docs, max - last) documents asked for, in value order (none when the counter was full).
struct ClaimedScope {
  ScopeRow row;
  std::vector<Document> docs;
};

// What a batch's claims found and wrote, by scope; a scope missing from it got nothing.
using ClaimedScopes = std::map<std::string, ClaimedScope, std::less<>>;

// What the engines do differently in numbering: taking numbers and writing the documents
// they number. PostgreSQL moves a counter and writes its documents (lines and receipts
// included) in one statement, and its combining lane skips a counter another transaction
// holds (SKIP LOCKED); SQLite sends the same steps one by one under the database's one write
// lock, where no other transaction can hold a counter. Each method is NumberingStore's of the
// same name (claim_if_free: claim_scopes without `wait`). Each engine implements them in
// store/<engine>/numbering_ops.cpp, under the contract tests (the conformance suite).
class NumberingOps {
 public:
  virtual ~NumberingOps() = default;
  virtual Result<std::optional<Document>> allocate(store::Connection& c, std::string_view scope,
                                                   const NewDocument& doc,
                                                   store::Then then) const = 0;
  virtual Result<std::optional<Document>> allocate_if_free(store::Connection& c,
                                                           std::string_view scope,
                                                           const NewDocument& doc,
                                                           store::Then then) const = 0;
  virtual Result<std::vector<Document>> allocate_many(store::Connection& c, std::string_view scope,
                                                      std::int64_t last,
                                                      std::span<const NewDocument> docs,
                                                      std::span<const NewReceipt> receipts,
                                                      store::Then then) const = 0;
  virtual Result<ClaimedScopes> claim_if_free(store::Connection& c,
                                              std::span<const ScopeClaim> claims,
                                              store::Then then) const = 0;
};

// NumberingStore::claim_scopes one scope at a time: every counter locked first (in the
// claims' order; with `wait` a missing scope created with the default format before), then
// each scope's documents and receipts written by `ops.allocate_many`, the last write carrying
// `then`. What the store runs with `wait`, and an engine's claim_if_free where reading a
// counter under its write lock is locking it.
Result<ClaimedScopes> claim_each_scope(store::Connection& c, const NumberingSql& sql,
                                       const NumberingOps& ops, std::span<const ScopeClaim> claims,
                                       bool wait, store::Then then);

// The rows numbering's statements answer, each column group decoded in one place, and the
// JSON rows its batch statements take: shared by the store and the engines' operations.
namespace numbering_rows {

// A document's columns (NumberingSql's order), from a statement's `at`: this many.
inline constexpr std::size_t kDocumentColumns = 9;

// A document as a statement wrote it: its lines are the request's, which the caller sets.
Document written_document(const store::Row& r, std::size_t at);
// A stored document as a statement read it: its columns, then its lines.
Document stored_document(const store::Row& r, std::size_t at);
// A counter's columns from `at`: width, radix, max, last_value.
inline constexpr std::size_t kScopeRowColumns = 4;
ScopeRow scope_row(const store::Row& r, std::size_t at);
// The document an insert statement answered with (none: no row), its lines `doc`'s.
std::optional<Document> written_one(const store::Rows& rows, const NewDocument& doc);
// The documents a batch insert answered with, in value order, their lines `docs`' (in value
// order too); an error unless there is one per document.
Result<std::vector<Document>> written_many(const store::Rows& rows,
                                           std::span<const NewDocument> docs);

// NULL for an empty body text.
store::Param text_or_null(std::string_view s);
// One document's fields after its place in a JSON row: title, principal, header, lines (the
// body's texts as JSON strings, null when none).
void append_document_fields(std::string& out, const NewDocument& d);
// A batch's documents as one JSON array of [title, principal, header, lines].
std::string json_document_rows(std::span<const NewDocument> docs);
// A batch's receipts as one JSON array of [key, title, value].
std::string json_receipt_rows(std::span<const NewReceipt> receipts);

}  // namespace numbering_rows

class NumberingStore {
 public:
  explicit NumberingStore(const Dialect& dialect);
  Result<std::optional<DocumentReceipt>> find_receipt(store::Connection& c, std::string_view scope,
                                                      std::string_view key);
  // Takes the next value and inserts the document: nullopt when the scope is exhausted.
  Result<std::optional<Document>> allocate(store::Connection& c, std::string_view scope,
                                           const NewDocument& doc, store::Then then);
  // allocate, except that it never waits for a counter another transaction holds: nullopt
  // also when the counter is held elsewhere or the scope does not exist yet (on SQLite, where
  // no other transaction can hold a counter, exactly allocate).
  Result<std::optional<Document>> allocate_if_free(store::Connection& c, std::string_view scope,
                                                   const NewDocument& doc, store::Then then);
  Status insert_receipt(store::Connection& c, std::string_view scope, std::string_view key,
                        std::string_view title, std::int64_t value, store::Then then);
  // The receipts of those of `keys` that have one, keyed by idempotency key.
  Result<std::map<std::string, DocumentReceipt, std::less<>>> find_receipts(
      store::Connection& c, std::string_view scope, std::span<const std::string_view> keys);
  // Moves the counter from `last` (read under lock) to last + docs.size() and inserts the
  // documents (values last+1…, in order) and `receipts`: the documents in value order. The
  // caller checked the scope's max.
  Result<std::vector<Document>> allocate_many(store::Connection& c, std::string_view scope,
                                              std::int64_t last, std::span<const NewDocument> docs,
                                              std::span<const NewReceipt> receipts,
                                              store::Then then);
  // A batch's claims (each scope once, in name order: the order in which the counters are
  // locked): every counter it can have locked, and each scope given the next numbers for as
  // many of its documents as fit under max, documents and receipts written; a full counter is
  // read, not locked (its requests write nothing, and a transaction that locks nothing
  // commits without a WAL flush). By scope; a scope missing from the answer got nothing.
  // Without `wait` a counter another transaction holds, or a scope that does not exist yet,
  // is skipped (on PostgreSQL: one statement, one round trip with `then`); with `wait` a new
  // scope is created with the default format and a held counter waited for.
  Result<ClaimedScopes> claim_scopes(store::Connection& c, std::span<const ScopeClaim> claims,
                                     bool wait, store::Then then);
  Result<std::optional<ScopeRow>> lock_scope(store::Connection& c, std::string_view scope);
  // The counter as the statement's snapshot sees it, without locking it.
  Result<std::optional<ScopeRow>> read_scope(store::Connection& c, std::string_view scope);
  // Writes the format unless upsert_format's condition refuses it (false). `locked`: the caller
  // holds the scope's row (lock_scope found it).
  Result<bool> upsert_format(store::Connection& c, std::string_view scope, const ScopeFormat& f,
                             bool locked);
  // Creates the scope with `format` if it does not exist yet (an existing one is kept).
  Status ensure_scope(store::Connection& c, std::string_view scope, const ScopeFormat& format);
  Result<std::optional<ScopeInfo>> scope_info(store::Connection& c, std::string_view scope);
  Result<std::optional<Document>> get_document(store::Connection& c, std::string_view scope,
                                               std::int64_t value);
  Result<std::vector<Document>> list(store::Connection& c, std::string_view scope,
                                     std::int64_t after, int limit);
  Result<std::vector<std::int64_t>> existing_values(store::Connection& c, std::string_view scope,
                                                    std::span<const std::int64_t> values);
  Status insert_legacy(store::Connection& c, std::string_view scope, std::int64_t value,
                       std::string_view number, std::string_view scheme, std::string_view title,
                       std::string_view principal);
  Status raise_last_value(store::Connection& c, std::string_view scope, std::int64_t value);

 private:
  const Dialect& dialect_;
  const NumberingSql& sql_;
};

}  // namespace onceorder::store
