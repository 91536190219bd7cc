// PostgreSQL's numbering operations (NumberingOps, store/numbering_store.hpp): a counter step
// and the documents it numbers, with their lines and receipts, are one statement
// (data-modifying CTEs), so a lone number or a batch costs one round trip, which also carries
// `then`. The combining lane never waits for a counter another transaction holds: its
// statements skip it (SKIP LOCKED) and answer without it.
#include <algorithm>
#include <string>

#include "onceorder/core/text.hpp"
#include "store/numbering_store.hpp"
#include "store/postgres/dialect.hpp"
#include "store/sql_catalog.hpp"

namespace onceorder::store::postgres {
namespace {

using numbering_rows::text_or_null;

// num_claim_scopes' rows: a kind, then a written document's columns (kind 1), or a counter as
// the statement found it (kind 2): its scope where the document's is, its columns after the
// document's.
constexpr std::size_t kKind = 0;
constexpr std::int64_t kWrittenDocument = 1;
constexpr std::int64_t kFoundCounter = 2;
constexpr std::size_t kDocumentAt = 1;
constexpr std::size_t kCounterScope = kDocumentAt;
constexpr std::size_t kCounterAt = kDocumentAt + numbering_rows::kDocumentColumns;

// num_claim_scopes' parameters: claims [scope, count], documents [scope, ordinal, title,
// principal, header, lines], receipts [scope, key, title, ordinal]; ordinals from 1.
struct ClaimLists {
  std::string scopes = "[", documents = "[", receipts = "[";
};

ClaimLists claim_lists(std::span<const ScopeClaim> claims) {
  ClaimLists l;
  const auto next = [](std::string& list) { list += list.size() > 1 ? ",[" : "["; };
  for (const ScopeClaim& claim : claims) {
    next(l.scopes);
    append_json_string(l.scopes, claim.scope);
    l.scopes += ',' + std::to_string(claim.docs.size()) + ']';
    for (std::size_t k = 0; k < claim.docs.size(); ++k) {
      next(l.documents);
      append_json_string(l.documents, claim.scope);
      l.documents += ',' + std::to_string(k + 1) + ',';
      numbering_rows::append_document_fields(l.documents, claim.docs[k]);
      l.documents += ']';
    }
    for (const ScopeClaim::Receipt& r : claim.receipts) {
      next(l.receipts);
      append_json_string(l.receipts, claim.scope);
      l.receipts += ',';
      append_json_string(l.receipts, r.key);
      l.receipts += ',';
      append_json_string(l.receipts, claim.docs.at(r.ordinal).title);
      l.receipts += ',' + std::to_string(r.ordinal + 1) + ']';
    }
  }
  l.scopes += ']';
  l.documents += ']';
  l.receipts += ']';
  return l;
}

// What num_claim_scopes answered, by scope: each counter found, with its documents in value
// order and their lines the requests' (a claim's first documents are the ones granted).
Result<ClaimedScopes> claimed_from(const Rows& rows, std::span<const ScopeClaim> claims) {
  ClaimedScopes out;
  std::vector<Document> docs;
  for (const Row& r : rows) {
    if (r.i64(kKind) == kWrittenDocument) {
      docs.push_back(numbering_rows::written_document(r, kDocumentAt));
    } else if (r.i64(kKind) == kFoundCounter) {
      out.emplace(r.text(kCounterScope),
                  ClaimedScope{numbering_rows::scope_row(r, kCounterAt), {}});
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
  for (const ScopeClaim& claim : claims) {
    auto it = out.find(claim.scope);
    if (it == out.end()) continue;
    std::vector<Document>& docs_of = it->second.docs;
    for (std::size_t i = 0; i < docs_of.size() && i < claim.docs.size(); ++i)
      docs_of[i].lines = claim.docs[i].lines;
  }
  return out;
}

class PgNumberingOps final : public NumberingOps {
 public:
  explicit PgNumberingOps(const SqlCatalog& sql)
      : insert_issued_(sql.get("num_insert_issued")),
        insert_if_free_(sql.get("num_insert_if_free")),
        insert_many_(sql.get("num_insert_many")),
        claim_scopes_(sql.get("num_claim_scopes")) {}

  Result<std::optional<Document>> allocate(Connection& c, std::string_view scope,
                                           const NewDocument& doc, Then then) const override {
    return insert_one(c, insert_issued_, scope, doc, then);
  }

  Result<std::optional<Document>> allocate_if_free(Connection& c, std::string_view scope,
                                                   const NewDocument& doc,
                                                   Then then) const override {
    return insert_one(c, insert_if_free_, scope, doc, then);
  }

  Result<std::vector<Document>> allocate_many(Connection& c, std::string_view scope,
                                              std::int64_t last, std::span<const NewDocument> docs,
                                              std::span<const NewReceipt> receipts,
                                              Then then) const override {
    const std::int64_t new_last = last + static_cast<std::int64_t>(docs.size());
    const std::string documents = numbering_rows::json_document_rows(docs);
    const std::string receipt_rows = numbering_rows::json_receipt_rows(receipts);
    OO_ASSIGN_OR_RETURN(auto rows, c.query(insert_many_,
                                           {scope, last, new_last, std::string_view(documents),
                                            std::string_view(receipt_rows)},
                                           then));
    return numbering_rows::written_many(rows, docs);
  }

  Result<ClaimedScopes> claim_if_free(Connection& c, std::span<const ScopeClaim> claims,
                                      Then then) const override {
    const ClaimLists l = claim_lists(claims);
    OO_ASSIGN_OR_RETURN(auto rows,
                        c.query(claim_scopes_,
                                {std::string_view(l.scopes), std::string_view(l.documents),
                                 std::string_view(l.receipts)},
                                then));
    return claimed_from(rows, claims);
  }

 private:
  // num_insert_issued or num_insert_if_free.
  static Result<std::optional<Document>> insert_one(Connection& c, const Statement& statement,
                                                    std::string_view scope, const NewDocument& doc,
                                                    Then then) {
    OO_ASSIGN_OR_RETURN(auto rows, c.query(statement,
                                           {scope, doc.title, doc.principal,
                                            text_or_null(doc.header), text_or_null(doc.lines)},
                                           then));
    return numbering_rows::written_one(rows, doc);
  }

  // (scope, title, principal, header, lines) → document; no row when the scope is exhausted.
  // Moves the counter (creating the scope with the default format if missing) and writes the
  // document and its lines.
  Statement insert_issued_;
  // As insert_issued; no row also when the counter is held elsewhere or the scope does not
  // exist yet.
  Statement insert_if_free_;
  // (scope, last, new last, documents JSON array of [title, principal, header, lines],
  // receipts JSON array of [key, title, value]): sets the counter to `new last` and inserts
  // documents last+1…, their lines and the receipts → the documents.
  Statement insert_many_;
  // claim_if_free (ClaimLists → the rows claimed_from reads).
  Statement claim_scopes_;
};

}  // namespace

const NumberingOps& numbering_ops(const SqlCatalog& sql) {
  static const PgNumberingOps ops(sql);
  return ops;
}

}  // namespace onceorder::store::postgres
