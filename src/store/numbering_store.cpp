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

// A document as a statement wrote it (NumberingSql's columns from `at` on): its lines are the
// request's, which the caller sets.
Document document_from(const Row& r, size_t at = 0) {
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

// A stored document as a statement read it: the columns, then its lines.
Document stored_document_from(const Row& r, size_t at = 0) {
  Document d = document_from(r, at);
  d.lines = text_or_empty(r, at + 9);
  return d;
}

Param text_or_null(std::string_view s) { return s.empty() ? Param(nullptr) : Param(s); }

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

// One document's fields after its place in a JSON row: title, principal, header, lines (the
// body's texts as JSON strings, null when none).
void append_document_fields(std::string& out, const NewDocument& d) {
  append_json_string(out, d.title);
  out += ',';
  append_json_string(out, d.principal);
  out += ',';
  append_json_string_or_null(out, d.header);
  out += ',';
  append_json_string_or_null(out, d.lines);
}

// A batch's documents as one JSON array of [title, principal, header, lines].
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

}  // namespace

NumberingStore::NumberingStore(const Dialect& dialect)
    : dialect_(dialect), sql_(dialect.numbering) {}

Result<std::optional<DocumentReceipt>> NumberingStore::find_receipt(store::Connection& c,
                                                                    std::string_view scope,
                                                                    std::string_view key) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.find_receipt, {scope, key}));
  if (rows.empty()) return std::optional<DocumentReceipt>();
  return std::optional<DocumentReceipt>(
      DocumentReceipt{rows[0].text(0), stored_document_from(rows[0], 1)});
}

Result<std::optional<Document>> NumberingStore::allocate(store::Connection& c,
                                                         std::string_view scope,
                                                         const NewDocument& doc, store::Then then) {
  if (dialect_.writes_in_one_statement) {
    OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.insert_issued,
                                           {scope, doc.title, doc.principal,
                                            text_or_null(doc.header), text_or_null(doc.lines)},
                                           then));
    return issued(rows, doc);
  }
  OO_ASSIGN_OR_RETURN(auto bumped, c.query(sql_.bump_counter, {scope}));
  if (bumped.empty()) return std::optional<Document>();
  const Then after_doc = doc.lines.empty() ? then : Then::stay;
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.insert_issued,
                         {scope, doc.title, doc.principal, text_or_null(doc.header)}, after_doc));
  if (!rows.empty() && !doc.lines.empty()) {
    OO_RETURN_IF_ERROR(
        c.query(sql_.insert_lines, {scope, rows[0].i64(1), doc.lines}, then).status());
  }
  return issued(rows, doc);
}

Result<std::optional<Document>> NumberingStore::issued(const Rows& rows, const NewDocument& doc) {
  if (rows.empty()) return std::optional<Document>();
  Document d = document_from(rows[0]);
  d.lines = doc.lines;
  return std::optional<Document>(std::move(d));
}

Result<std::map<std::string, DocumentReceipt, std::less<>>> NumberingStore::find_receipts(
    store::Connection& c, std::string_view scope, std::span<const std::string_view> keys) {
  const std::string list = json_text_array(keys);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.find_receipts, {scope, std::string_view(list)}));
  std::map<std::string, DocumentReceipt, std::less<>> out;
  for (const Row& r : rows)
    out.emplace(r.text(0), DocumentReceipt{r.text(1), stored_document_from(r, 2)});
  return out;
}

Result<std::vector<Document>> NumberingStore::allocate_many(
    store::Connection& c, std::string_view scope, std::int64_t last,
    std::span<const NewDocument> docs, std::span<const NewReceipt> receipts, store::Then then) {
  const std::int64_t new_last = last + static_cast<std::int64_t>(docs.size());
  const std::string title_list = json_document_rows(docs);
  const std::string receipt_list = json_receipt_rows(receipts);
  const bool one_statement = dialect_.writes_in_one_statement;
  if (!one_statement) OO_RETURN_IF_ERROR(c.query(sql_.set_counter, {scope, new_last}).status());
  const bool any_lines =
      std::any_of(docs.begin(), docs.end(), [](const NewDocument& d) { return !d.lines.empty(); });
  const bool last_statement = one_statement || (receipts.empty() && !any_lines);
  const Then after_docs = last_statement ? then : Then::stay;
  OO_ASSIGN_OR_RETURN(
      auto rows, one_statement ? c.query(sql_.insert_many,
                                         {scope, last, new_last, std::string_view(title_list),
                                          std::string_view(receipt_list)},
                                         after_docs)
                               : c.query(sql_.insert_many,
                                         {scope, last, std::string_view(title_list)}, after_docs));
  if (!one_statement && any_lines) {
    OO_RETURN_IF_ERROR(c.query(sql_.insert_many_lines, {scope, last, std::string_view(title_list)},
                               receipts.empty() ? then : Then::stay)
                           .status());
  }
  if (!one_statement && !receipts.empty()) {
    OO_RETURN_IF_ERROR(
        c.query(sql_.insert_receipts, {scope, std::string_view(receipt_list)}, then).status());
  }
  std::vector<Document> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(document_from(r));
  std::sort(out.begin(), out.end(),
            [](const Document& a, const Document& b) { return a.value < b.value; });
  if (out.size() != docs.size())
    return Status(Code::internal, "a batch of documents was not inserted whole");
  for (std::size_t i = 0; i < out.size(); ++i) out[i].lines = docs[i].lines;  // in value order
  return out;
}

Result<std::optional<Document>> NumberingStore::allocate_if_free(store::Connection& c,
                                                                 std::string_view scope,
                                                                 const NewDocument& doc,
                                                                 store::Then then) {
  if (sql_.insert_if_free.name.empty()) return allocate(c, scope, doc, then);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.insert_if_free,
                                         {scope, doc.title, doc.principal, text_or_null(doc.header),
                                          text_or_null(doc.lines)},
                                         then));
  return issued(rows, doc);
}

Result<std::map<std::string, ClaimedScope, std::less<>>> NumberingStore::claim_scopes(
    store::Connection& c, std::span<const ScopeClaim> claims, bool wait, store::Then then) {
  if (!wait && !sql_.claim_scopes.name.empty()) return claim_in_one_statement(c, claims, then);
  // Every counter first (in the claims' order), then the writes, the last one carrying `then`.
  std::map<std::string, ClaimedScope, std::less<>> out;
  struct Writing {
    const ScopeClaim* claim;
    ClaimedScope* found;
    std::size_t granted;  // how many of its documents fit under max
  };
  std::vector<Writing> writing;
  for (const ScopeClaim& claim : claims) {
    if (wait) OO_RETURN_IF_ERROR(ensure_scope(c, claim.scope, ScopeFormat{}));
    OO_ASSIGN_OR_RETURN(auto row, lock_scope(c, claim.scope));
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
                        allocate_many(c, claim->scope, last,
                                      std::span<const NewDocument>(claim->docs).first(granted),
                                      receipts, w + 1 == writing.size() ? then : Then::stay));
  }
  return out;
}

Result<std::map<std::string, ClaimedScope, std::less<>>> NumberingStore::claim_in_one_statement(
    store::Connection& c, std::span<const ScopeClaim> claims, store::Then then) {
  std::string scopes = "[", documents = "[", receipts = "[";
  const auto next = [](std::string& list) { list += list.size() > 1 ? ",[" : "["; };
  for (const ScopeClaim& claim : claims) {
    next(scopes);
    append_json_string(scopes, claim.scope);
    scopes += ',' + std::to_string(claim.docs.size()) + ']';
    for (std::size_t k = 0; k < claim.docs.size(); ++k) {
      next(documents);
      append_json_string(documents, claim.scope);
      documents += ',' + std::to_string(k + 1) + ',';
      append_document_fields(documents, claim.docs[k]);
      documents += ']';
    }
    for (const ScopeClaim::Receipt& r : claim.receipts) {
      next(receipts);
      append_json_string(receipts, claim.scope);
      receipts += ',';
      append_json_string(receipts, r.key);
      receipts += ',';
      append_json_string(receipts, claim.docs.at(r.ordinal).title);
      receipts += ',' + std::to_string(r.ordinal + 1) + ']';
    }
  }
  scopes += ']';
  documents += ']';
  receipts += ']';
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.claim_scopes,
                                         {std::string_view(scopes), std::string_view(documents),
                                          std::string_view(receipts)},
                                         then));
  std::map<std::string, ClaimedScope, std::less<>> out;
  std::vector<Document> docs;
  for (const Row& r : rows) {
    if (r.i64(0) == 1) {
      docs.push_back(document_from(r, 1));
    } else if (r.i64(0) == 2) {
      out.emplace(r.text(1),
                  ClaimedScope{ScopeRow{ScopeFormat{static_cast<int>(r.i64(10)),
                                                    static_cast<int>(r.i64(11)), r.i64(12)},
                                        r.i64(13)},
                               {}});
    }
  }
  for (Document& d : docs) {
    auto it = out.find(d.scope);
    if (it == out.end()) return Status(Code::internal, "a batch wrote a document elsewhere");
    it->second.docs.push_back(std::move(d));
  }
  for (auto& [scope, found] : out) {
    std::sort(found.docs.begin(), found.docs.end(),
              [](const Document& a, const Document& b) { return a.value < b.value; });
  }
  // The lines are the requests' (a claim's first documents are the ones granted).
  for (const ScopeClaim& claim : claims) {
    auto it = out.find(claim.scope);
    if (it == out.end()) continue;
    std::vector<Document>& docs_of = it->second.docs;
    for (std::size_t i = 0; i < docs_of.size() && i < claim.docs.size(); ++i)
      docs_of[i].lines = claim.docs[i].lines;
  }
  return out;
}

Status NumberingStore::insert_receipt(store::Connection& c, std::string_view scope,
                                      std::string_view key, std::string_view title,
                                      std::int64_t value, store::Then then) {
  return c.query(sql_.insert_receipt, {scope, key, title, value}, then).status();
}

Result<std::optional<ScopeRow>> NumberingStore::lock_scope(store::Connection& c,
                                                           std::string_view scope) {
  return scope_row(c, sql_.lock_scope, scope);
}

Result<std::optional<ScopeRow>> NumberingStore::read_scope(store::Connection& c,
                                                           std::string_view scope) {
  return scope_row(c, sql_.read_scope, scope);
}

Result<std::optional<ScopeRow>> NumberingStore::scope_row(store::Connection& c,
                                                          const store::Statement& statement,
                                                          std::string_view scope) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(statement, {scope}));
  if (rows.empty()) return std::optional<ScopeRow>();
  const Row& r = rows[0];
  return std::optional<ScopeRow>(ScopeRow{
      ScopeFormat{static_cast<int>(r.i64(0)), static_cast<int>(r.i64(1)), r.i64(2)}, r.i64(3)});
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
  return c
      .query(sql_.ensure_scope,
             {scope, std::int64_t{f.width}, std::int64_t{f.radix}, std::int64_t{f.max}})
      .status();
}

Result<std::optional<ScopeInfo>> NumberingStore::scope_info(store::Connection& c,
                                                            std::string_view scope) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.scope_info, {scope}));
  if (rows.empty()) return std::optional<ScopeInfo>();
  const Row& r = rows[0];
  ScopeInfo info;
  info.scope = r.text(0);
  info.format = ScopeFormat{static_cast<int>(r.i64(1)), static_cast<int>(r.i64(2)), r.i64(3)};
  info.last_value = r.i64(4);
  info.issued = r.i64(5);
  info.imported = r.i64(6);
  return std::optional<ScopeInfo>(std::move(info));
}

Result<std::vector<Document>> NumberingStore::list(store::Connection& c, std::string_view scope,
                                                   std::int64_t after, int limit) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.list_documents, {scope, after, std::int64_t{limit}}));
  std::vector<Document> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(stored_document_from(r));
  return out;
}

Result<std::optional<Document>> NumberingStore::get_document(store::Connection& c,
                                                             std::string_view scope,
                                                             std::int64_t value) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.get_document, {scope, value}));
  if (rows.empty()) return std::optional<Document>();
  return std::optional<Document>(stored_document_from(rows[0]));
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
