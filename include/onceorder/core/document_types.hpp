// The numbering domain's values: documents and scopes. Plain data shared by the store and
// the service layers, below both; no I/O. Thread-safety: values only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "onceorder/core/limits.hpp"
#include "onceorder/core/number_format.hpp"

namespace onceorder {

struct Document {
  std::string scope;
  std::int64_t value = 0;
  std::string number;  // as issued ("0296") or as written in the legacy system ("3E8")
  std::string origin;  // "issued" | "legacy"
  std::string scheme;  // "r10w4" for issued numbers, dec3 | hex3 | dec4 for legacy ones
  std::string title;
  std::string created_at;  // ISO 8601 UTC
  // Who issued it (onceorder/core/principal.hpp); empty for a document from before principals
  // were recorded.
  std::string principal;
  // Its body, as JSON text in the API's canonical form (members sorted, no spaces): the
  // header object and the array of line objects; empty when the document has none.
  std::string header{};
  std::string lines{};
};

struct ScopeInfo {
  std::string scope;
  ScopeFormat format;
  std::int64_t last_value = 0;
  std::int64_t issued = 0;    // documents numbered by OnceOrder
  std::int64_t imported = 0;  // legacy documents
  std::int64_t remaining() const { return format.max - last_value; }
};

// A scope with its gap audit, as the scope list shows it.
struct ScopeAudit {
  ScopeInfo info;
  // Rows invariant I7 reports for this scope: an issued value whose predecessor has no
  // document, and a counter that is not the largest value. 0 when healthy.
  std::int64_t gaps = 0;
  // Values in 1..last_value without a document, legacy holes included (an imported history
  // may have them; OnceOrder's own numbers never leave one).
  std::int64_t missing = 0;
};

}  // namespace onceorder
