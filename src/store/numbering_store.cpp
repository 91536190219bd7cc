#include "store/numbering_store.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "onceorder/core/text.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {
namespace {

using store::Row;

std::string text_or_empty(const Row& r, size_t i) { return r.is_null(i) ? "" : r.text(i); }

void append_json_string_or_null(std::string& out, std::string_view s) {
  if (s.empty()) {
    out += "null";
  } else {
    append_json_string(out, s);
  }
}

// A batch's keys as one JSON array.
std::string json_text_array(std::span<const std::string_view> items) {
  std::string out = "[";
  for (auto item : items) {
    if (out.size() > 1) out += ',';
    append_json_string(out, item);
  }
  out += ']';
  return out;
}

// A receipt as num_find_receipt and num_find_receipts answer it from `at`: its title, then the
// stored document.
DocumentReceipt receipt_from(const Row& r, size_t at) {
  return DocumentReceipt{r.text(at), numbering_rows::stored_document(r, at + 1)};
}

// num_scope_info's row: the scope, its counter's columns (numbering_rows::scope_row), then
// how many documents it issued and imported.
ScopeInfo scope_info_from(const Row& r) {
  constexpr size_t kCounterAt = 1;
  constexpr size_t kIssued = kCounterAt + numbering_rows::kScopeRowColumns;
  const ScopeRow counter = numbering_rows::scope_row(r, kCounterAt);
  ScopeInfo info;
  info.scope = r.text(0);
  info.format = counter.format;
  info.last_value = counter.last_value;
  info.issued = r.i64(kIssued);
  info.imported = r.i64(kIssued + 1);
  return info;
}

Status ensure_scope_with(store::Connection& c, const NumberingSql& sql, std::string_view scope,
                         const ScopeFormat& f) {
  return c
      .query(sql.ensure_scope,
             {scope, std::int64_t{f.width}, std::int64_t{f.radix}, std::int64_t{f.max}})
      .status();
}

// (scope) → width, radix, max, last_value by `statement`.
Result<std::optional<ScopeRow>> query_scope_row(store::Connection& c,
                                                const store::Statement& statement,
                                                std::string_view scope) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(statement, {scope}));
  if (rows.empty()) return std::optional<ScopeRow>();
  return std::optional<ScopeRow>(numbering_rows::scope_row(rows[0], 0));
}

}  // namespace

namespace numbering_rows {

Document written_document(const Row& r, size_t at) {
  return Document{r.text(at),
                  r.i64(at + 1),
                  r.text(at + 2),
                  r.text(at + 3),
                  r.text(at + 4),
                  r.text(at + 5),
                  r.text(at + 6),
                  text_or_empty(r, at + 7),
                  text_or_empty(r, at + 8)};
}

Document stored_document(const Row& r, size_t at) {
  Document d = written_document(r, at);
  d.lines = text_or_empty(r, at + kDocumentColumns);
  return d;
}

ScopeRow scope_row(const Row& r, size_t at) {
  return ScopeRow{
      ScopeFormat{static_cast<int>(r.i64(at)), static_cast<int>(r.i64(at + 1)), r.i64(at + 2)},
      r.i64(at + 3)};
}

std::optional<Document> written_one(const Rows& rows, const NewDocument& doc) {
  if (rows.empty()) return std::nullopt;
  Document d = written_document(rows[0], 0);
  d.lines = doc.lines;
  return d;
}

Result<std::vector<Document>> written_many(const Rows& rows, std::span<const NewDocument> docs) {
  std::vector<Document> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(written_document(r, 0));
  std::sort(out.begin(), out.end(),
            [](const Document& a, const Document& b) { return a.value < b.value; });
  if (out.size() != docs.size())
    return Status(Code::internal, "a batch of documents was not inserted whole");
  for (std::size_t i = 0; i < out.size(); ++i) out[i].lines = docs[i].lines;  // in value order
  return out;
}

Param text_or_null(std::string_view s) { return s.empty() ? Param(nullptr) : Param(s); }

void append_document_fields(std::string& out, const NewDocument& d) {
  append_json_string(out, d.title);
  out += ',';
  append_json_string(out, d.principal);
  out += ',';
  append_json_string_or_null(out, d.header);
  out += ',';
  append_json_string_or_null(out, d.lines);
}

std::string json_document_rows(std::span<const NewDocument> docs) {
  std::string out = "[";
  for (const NewDocument& d : docs) {
    out += out.size() > 1 ? ",[" : "[";
    append_document_fields(out, d);
    out += ']';
  }
  out += ']';
  return out;
}

std::string json_receipt_rows(std::span<const NewReceipt> receipts) {
  std::string out = "[";
  for (const NewReceipt& r : receipts) {
    if (out.size() > 1) out += ',';
    out += '[';
    append_json_string(out, r.key);
    out += ',';
    append_json_string(out, r.title);
    out += ',';
    out += std::to_string(r.value);
    out += ']';
  }
  out += ']';
  return out;
}

}  // namespace numbering_rows

Result<ClaimedScopes> claim_each_scope(store::Connection& c, const NumberingSql& sql,
                                       const NumberingOps& ops, std::span<const ScopeClaim> claims,
                                       bool wait, store::Then then) {
  ClaimedScopes out;
  struct Writing {
    const ScopeClaim* claim;
    ClaimedScope* found;
    std::size_t granted;  // how many of its documents fit under max
  };
  std::vector<Writing> writing;
  for (const ScopeClaim& claim : claims) {
    if (wait) OO_RETURN_IF_ERROR(ensure_scope_with(c, sql, claim.scope, ScopeFormat{}));
    OO_ASSIGN_OR_RETURN(auto row, query_scope_row(c, sql.lock_scope, claim.scope));
    if (!row) continue;
    ClaimedScope& found =
        out.emplace(std::string(claim.scope), ClaimedScope{*row, {}}).first->second;
    const std::int64_t room = std::max<std::int64_t>(0, row->format.max - row->last_value);
    const auto n = std::min(claim.docs.size(), static_cast<std::size_t>(room));
    if (n > 0) writing.push_back({&claim, &found, n});
  }
  for (std::size_t w = 0; w < writing.size(); ++w) {
    const auto& [claim, found, granted] = writing[w];
    const std::int64_t last = found->row.last_value;
    std::vector<NewReceipt> receipts;
    for (const ScopeClaim::Receipt& r : claim->receipts) {
      if (r.ordinal < granted)
        receipts.push_back(
            {r.key, claim->docs[r.ordinal].title, last + static_cast<std::int64_t>(r.ordinal) + 1});
    }
    OO_ASSIGN_OR_RETURN(found->docs,
                        ops.allocate_many(c, claim->scope, last,
                                          std::span<const NewDocument>(claim->docs).first(granted),
                                          receipts, w + 1 == writing.size() ? then : Then::stay));
  }
  return out;
}

NumberingStore::NumberingStore(const Dialect& dialect)
    : dialect_(dialect), sql_(dialect.numbering) {}

Result<std::optional<DocumentReceipt>> NumberingStore::find_receipt(store::Connection& c,
                                                                    std::string_view scope,
                                                                    std::string_view key) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.find_receipt, {scope, key}));
  if (rows.empty()) return std::optional<DocumentReceipt>();
  return std::optional<DocumentReceipt>(receipt_from(rows[0], 0));
}

Result<std::optional<Document>> NumberingStore::allocate(store::Connection& c,
                                                         std::string_view scope,
                                                         const NewDocument& doc, store::Then then) {
  return dialect_.numbering_ops.allocate(c, scope, doc, then);
}

Result<std::map<std::string, DocumentReceipt, std::less<>>> NumberingStore::find_receipts(
    store::Connection& c, std::string_view scope, std::span<const std::string_view> keys) {
  const std::string list = json_text_array(keys);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.find_receipts, {scope, std::string_view(list)}));
  std::map<std::string, DocumentReceipt, std::less<>> out;
  for (const Row& r : rows) out.emplace(r.text(0), receipt_from(r, 1));
  return out;
}

Result<std::vector<Document>> NumberingStore::allocate_many(
    store::Connection& c, std::string_view scope, std::int64_t last,
    std::span<const NewDocument> docs, std::span<const NewReceipt> receipts, store::Then then) {
  return dialect_.numbering_ops.allocate_many(c, scope, last, docs, receipts, then);
}

Result<std::optional<Document>> NumberingStore::allocate_if_free(store::Connection& c,
                                                                 std::string_view scope,
                                                                 const NewDocument& doc,
                                                                 store::Then then) {
  return dialect_.numbering_ops.allocate_if_free(c, scope, doc, then);
}

Result<ClaimedScopes> NumberingStore::claim_scopes(store::Connection& c,
                                                   std::span<const ScopeClaim> claims, bool wait,
                                                   store::Then then) {
  if (!wait) return dialect_.numbering_ops.claim_if_free(c, claims, then);
  return claim_each_scope(c, sql_, dialect_.numbering_ops, claims, /*wait=*/true, then);
}

Status NumberingStore::insert_receipt(store::Connection& c, std::string_view scope,
                                      std::string_view key, std::string_view title,
                                      std::int64_t value, store::Then then) {
  return c.query(sql_.insert_receipt, {scope, key, title, value}, then).status();
}

Result<std::optional<ScopeRow>> NumberingStore::lock_scope(store::Connection& c,
                                                           std::string_view scope) {
  return query_scope_row(c, sql_.lock_scope, scope);
}

Result<std::optional<ScopeRow>> NumberingStore::read_scope(store::Connection& c,
                                                           std::string_view scope) {
  return query_scope_row(c, sql_.read_scope, scope);
}

Result<bool> NumberingStore::upsert_format(store::Connection& c, std::string_view scope,
                                           const ScopeFormat& f, bool locked) {
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.upsert_format, {scope, std::int64_t{f.width}, std::int64_t{f.radix},
                                              std::int64_t{f.max}, std::int64_t{locked ? 1 : 0}}));
  return !rows.empty();
}

Status NumberingStore::ensure_scope(store::Connection& c, std::string_view scope,
                                    const ScopeFormat& f) {
  return ensure_scope_with(c, sql_, scope, f);
}

Result<std::optional<ScopeInfo>> NumberingStore::scope_info(store::Connection& c,
                                                            std::string_view scope) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.scope_info, {scope}));
  if (rows.empty()) return std::optional<ScopeInfo>();
  return std::optional<ScopeInfo>(scope_info_from(rows[0]));
}

Result<std::vector<Document>> NumberingStore::list(store::Connection& c, std::string_view scope,
                                                   std::int64_t after, int limit) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.list_documents, {scope, after, std::int64_t{limit}}));
  std::vector<Document> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(numbering_rows::stored_document(r, 0));
  return out;
}

Result<std::optional<Document>> NumberingStore::get_document(store::Connection& c,
                                                             std::string_view scope,
                                                             std::int64_t value) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.get_document, {scope, value}));
  if (rows.empty()) return std::optional<Document>();
  return std::optional<Document>(numbering_rows::stored_document(rows[0], 0));
}

Result<std::vector<std::int64_t>> NumberingStore::existing_values(
    store::Connection& c, std::string_view scope, std::span<const std::int64_t> values) {
  std::string list;
  for (auto v : values) {
    if (!list.empty()) list += ',';
    list += std::to_string(v);
  }
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.existing_values, {scope, std::string_view(list)}));
  return first_column_i64(rows);
}

Status NumberingStore::insert_legacy(store::Connection& c, std::string_view scope,
                                     std::int64_t value, std::string_view number,
                                     std::string_view scheme, std::string_view title,
                                     std::string_view principal) {
  return c.query(sql_.insert_legacy, {scope, value, number, scheme, title, principal}).status();
}

Status NumberingStore::raise_last_value(store::Connection& c, std::string_view scope,
                                        std::int64_t value) {
  return c.query(sql_.raise_last, {scope, value}).status();
}

}  // namespace onceorder::store
