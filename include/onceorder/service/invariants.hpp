// Executable invariants (DESIGN.md I1–I8): each is a query that returns zero rows when the
// data is healthy. `onceorder check`, GET /v1/invariants and /metrics all run these.
// Thread-safety: stateless; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onceorder/store/store.hpp"

namespace onceorder {

struct InvariantResult {
  std::string id;    // "I7"
  std::string name;  // what must hold
  std::int64_t violations = 0;
  std::vector<std::string> sample;  // up to 5 offending rows, described
  // Known exceptions the operator chose (I1 under a new-rows-only live index: legacy
  // duplicates below its watermark). A note, not a violation: they do not fail `check`.
  std::int64_t accepted = 0;
  std::vector<std::string> accepted_sample;  // up to 5, described
};

// Runs every invariant this schema has, in id order.
Result<std::vector<InvariantResult>> check_invariants(store::Database& db,
                                                      store::Clock::time_point deadline);

}  // namespace onceorder
