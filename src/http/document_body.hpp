// A document's body over HTTP (docs/API.md, "Document numbers"): read from a
// `POST /v1/scopes/{scope}/documents` request into its canonical texts, and written back into
// answers. Pure and thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "http/json_input.hpp"
#include "onceorder/core/document_types.hpp"
#include "onceorder/service/numbering.hpp"

namespace onceorder::http {

// Reads "header" (an object) and "lines" (an array of at most kMaxDocumentLines objects) into
// `issue`'s canonical texts: nlohmann's dump, members sorted and no spaces, so that one body
// is one text whatever the order or spacing it came in (a key's replay compares texts). An
// empty `lines` array is no lines. Every key and string passes the usual string check; errors
// name their path ("lines[3].note") and go to `fields`.
void read_document_body(FieldReader& fields, IssueRequest& issue);

// A document as an answer: API.md's members, its body parsed back from its texts (`header`
// null and `lines` empty when it has none).
nlohmann::json document_json(const Document& d);

}  // namespace onceorder::http
