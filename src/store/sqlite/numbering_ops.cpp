// SQLite's numbering operations (NumberingOps, store/numbering_store.hpp): no data-modifying
// CTEs, so the counter moves first, then the documents take the values it moved over, then
// their lines and receipts, each step a statement, the last carrying `then`. A write
// transaction holds the database's one write lock from BEGIN IMMEDIATE: the extra statements
// cost no lock time, only calls into the library, and no other transaction can hold a
// counter, so the lane's operations are the waiting ones.
#include <algorithm>
#include <string>

#include "store/numbering_store.hpp"
#include "store/sql_catalog.hpp"
#include "store/sqlite/dialect.hpp"

namespace onceorder::store::sqlite {
namespace {

using numbering_rows::text_or_null;

class SqliteNumberingOps final : public NumberingOps {
 public:
  SqliteNumberingOps(const SqlCatalog& sql, const NumberingSql& shared)
      : shared_(shared),
        bump_counter_(sql.get("num_bump_counter")),
        insert_issued_(sql.get("num_insert_issued")),
        insert_lines_(sql.get("num_insert_lines")),
        set_counter_(sql.get("num_set_counter")),
        insert_many_(sql.get("num_insert_many")),
        insert_many_lines_(sql.get("num_insert_many_lines")),
        insert_receipts_(sql.get("num_insert_receipts")) {}

  Result<std::optional<Document>> allocate(Connection& c, std::string_view scope,
                                           const NewDocument& doc, Then then) const override {
    OO_ASSIGN_OR_RETURN(auto bumped, c.query(bump_counter_, {scope}));
    if (bumped.empty()) return std::optional<Document>();
    const Then after_doc = doc.lines.empty() ? then : Then::stay;
    OO_ASSIGN_OR_RETURN(
        auto rows, c.query(insert_issued_,
                           {scope, doc.title, doc.principal, text_or_null(doc.header)}, after_doc));
    std::optional<Document> issued = numbering_rows::written_one(rows, doc);
    if (issued && !doc.lines.empty()) {
      OO_RETURN_IF_ERROR(c.query(insert_lines_, {scope, issued->value, doc.lines}, then).status());
    }
    return issued;
  }

  Result<std::optional<Document>> allocate_if_free(Connection& c, std::string_view scope,
                                                   const NewDocument& doc,
                                                   Then then) const override {
    return allocate(c, scope, doc, then);
  }

  Result<std::vector<Document>> allocate_many(Connection& c, std::string_view scope,
                                              std::int64_t last, std::span<const NewDocument> docs,
                                              std::span<const NewReceipt> receipts,
                                              Then then) const override {
    const std::int64_t new_last = last + static_cast<std::int64_t>(docs.size());
    const std::string documents = numbering_rows::json_document_rows(docs);
    OO_RETURN_IF_ERROR(c.query(set_counter_, {scope, new_last}).status());
    const bool any_lines = std::any_of(docs.begin(), docs.end(),
                                       [](const NewDocument& d) { return !d.lines.empty(); });
    const Then after_docs = receipts.empty() && !any_lines ? then : Then::stay;
    OO_ASSIGN_OR_RETURN(
        auto rows, c.query(insert_many_, {scope, last, std::string_view(documents)}, after_docs));
    if (any_lines) {
      OO_RETURN_IF_ERROR(c.query(insert_many_lines_, {scope, last, std::string_view(documents)},
                                 receipts.empty() ? then : Then::stay)
                             .status());
    }
    if (!receipts.empty()) {
      const std::string receipt_rows = numbering_rows::json_receipt_rows(receipts);
      OO_RETURN_IF_ERROR(
          c.query(insert_receipts_, {scope, std::string_view(receipt_rows)}, then).status());
    }
    return numbering_rows::written_many(rows, docs);
  }

  Result<ClaimedScopes> claim_if_free(Connection& c, std::span<const ScopeClaim> claims,
                                      Then then) const override {
    return claim_each_scope(c, shared_, *this, claims, /*wait=*/false, then);
  }

 private:
  const NumberingSql& shared_;
  // (scope) → last_value, the counter moved by one (the scope created with the default format
  // if missing); no row when the scope is exhausted.
  Statement bump_counter_;
  // (scope, title, principal, header) → the document numbered by the counter's value.
  Statement insert_issued_;
  Statement insert_lines_;  // (scope, value, lines JSON array): one row per line
  Statement set_counter_;   // (scope, new last)
  // (scope, last, documents JSON array of [title, principal, header, lines]) → the documents
  // last+1…
  Statement insert_many_;
  Statement insert_many_lines_;  // (scope, last, documents JSON array): their lines
  Statement insert_receipts_;    // (scope, receipts JSON array of [key, title, value])
};

}  // namespace

const NumberingOps& numbering_ops(const SqlCatalog& sql, const NumberingSql& shared) {
  static const SqliteNumberingOps ops(sql, shared);
  return ops;
}

}  // namespace onceorder::store::sqlite
