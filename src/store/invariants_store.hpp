// The executable invariants (DESIGN.md I1–I17) as rows: one engine-neutral class over the
// engine's invariant queries (store/<engine>/invariants.sql). Runs in the caller's transaction.
//
// Thread-safety: immutable after construction; the Connection passed in is the caller's.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct InvariantRows {
  std::string id;                       // "I7"
  std::string name;                     // what must hold
  std::vector<std::string> violations;  // each described; none when the data is healthy
  std::vector<std::string> accepted;    // known exceptions the operator chose, each described
};

class InvariantsStore {
 public:
  explicit InvariantsStore(const Dialect& dialect);

  // Every invariant this schema has, in id order.
  Result<std::vector<InvariantRows>> check_all(store::Connection& c);

 private:
  std::span<const InvariantSql> invariants_;
};

}  // namespace onceorder::store
