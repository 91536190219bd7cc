// Order ids (seed 002): 64-bit, time-ordered, made in-process without a central hot spot.
//
//   [1 bit 0][41 bits ms since 2024-01-01][8 bits node id][14 bits sequence]
//
// The node id is leased from the database (NodeLease), so two live processes never share
// one; a new holder of a node never issues a time at or before the previous lease's end.
// The generator refuses (Code::unavailable) while the clock is behind the last issued
// timestamp, and waits for the next millisecond when 16384 ids were issued in one.
// The unique index on order ids stays the backstop.
//
// Thread-safety: next() is safe from many threads (one atomic word).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "onceorder/core/status.hpp"

namespace onceorder {

inline constexpr int kNodeBits = 8;
inline constexpr int kSequenceBits = 14;
inline constexpr std::int64_t kMaxNode = (1 << kNodeBits) - 1;
inline constexpr std::int64_t kIdEpochMs = 1704067200000;  // 2024-01-01T00:00:00Z

struct IdParts {
  std::int64_t ms = 0;  // Unix time in ms
  int node = 0;
  int sequence = 0;
};
IdParts decode_id(std::int64_t id);

// Crockford base 32 of the id, 13 characters, prefixed: "O-01HZX3K9QW2MT".
std::string order_number(std::int64_t id);

class IdGenerator {
 public:
  using MsClock = std::function<std::int64_t()>;  // Unix time in ms

  // `not_before_ms`: the end of the node's previous lease; no id carries a time ≤ it.
  IdGenerator(int node, std::int64_t not_before_ms, MsClock clock = {});

  Result<std::int64_t> next();
  int node() const { return node_; }

 private:
  int node_;
  MsClock clock_;
  std::atomic<std::int64_t> last_;  // (ms - epoch) << kSequenceBits | sequence
};

}  // namespace onceorder
