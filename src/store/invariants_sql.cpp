#include "store/invariants_sql.hpp"

namespace onceorder {
namespace {

// I7 is plain SQL both engines read the same way; `||` concatenates on both.
#define OO_I7_SQL                                                                                 \
  "SELECT 'scope ' || d.scope || ': issued value ' || d.value || ' has no value ' ||          \
  (d.value - 1) || ' before it' FROM documents d WHERE d.origin = 'issued' AND d.value > 1 "   \
  "AND NOT EXISTS (SELECT 1 FROM documents p WHERE p.scope = d.scope AND p.value = d.value - 1) " \
  "UNION ALL SELECT 'scope ' || s.scope || ': counter at ' || s.last_value || "                   \
  "' but largest document value is ' || COALESCE((SELECT max(value) FROM documents d WHERE "      \
  "d.scope = s.scope), 0) FROM doc_scopes s WHERE s.last_value <> COALESCE((SELECT max(value) "   \
  "FROM documents d WHERE d.scope = s.scope), 0)"

// Both engines read these the same way; an engine that needs its own text gets its own
// array here.
constexpr InvariantSql kPortable[] = {
    {"I7",
     "per document scope, values issued by OnceOrder are contiguous (no gaps, no duplicates)",
     {"inv_i7", OO_I7_SQL}},
};

}  // namespace

std::span<const InvariantSql> invariant_sql(Engine engine) {
  (void)engine;
  return kPortable;
}

}  // namespace onceorder
