// The numbering domain's values: documents and scopes. Plain data shared by the store and
// the service layers, below both; no I/O. Thread-safety: values only.
#pragma once

#include <cstdint>
#include <string>

#include "onceorder/number_format.hpp"

namespace onceorder {

struct Document {
  std::string scope;
  std::int64_t value = 0;
  std::string number;  // as issued ("0296") or as written in the legacy system ("3E8")
  std::string origin;  // "issued" | "legacy"
  std::string scheme;  // "r10w4" for issued numbers, dec3 | hex3 | dec4 for legacy ones
  std::string title;
  std::string created_at;  // ISO 8601 UTC
};

struct ScopeInfo {
  std::string scope;
  ScopeFormat format;
  std::int64_t last_value = 0;
  std::int64_t issued = 0;    // documents numbered by OnceOrder
  std::int64_t imported = 0;  // legacy documents
  std::int64_t remaining() const { return format.max - last_value; }
};

}  // namespace onceorder
