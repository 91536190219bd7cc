// What remembering placements' decisions for replays (onceorder/core/recent_answers.hpp) costs a
// placement with a fresh key, in-process (Google Benchmark): enter and leave with the memory
// off (the baseline: counting the requests running per key, which every placement did before)
// and on (a lookup, and a decision of a 5-line cart remembered; at capacity the oldest goes).
// A placement takes some hundreds of µs; docs/BENCHMARKS.md, "Replays from memory".
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <string>

#include "onceorder/service/intake.hpp"

namespace {

using namespace onceorder;
using namespace std::chrono_literals;

using Memory = Intake::ReplayMemory;

Placed five_line_order() {
  Placed p;
  p.order.order_no = "O2026120400000123";
  p.order.status = "placed";
  p.order.created_at = "2026-12-04T12:00:00.123Z";
  for (int l = 1; l <= 5; ++l) p.order.lines.push_back({l, l, 1, 100});
  return p;
}

void run(benchmark::State& state, Memory& memory, bool remember) {
  static std::atomic<std::int64_t> next{0};
  const Cart cart{1, {{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}}};
  const Placed placed = five_line_order();
  for (auto _ : state) {
    Intake::KeyOf key{1, "k-" + std::to_string(next++) + "-123456789"};
    auto entered = memory.enter(key, 0, Memory::Clock::now() + 1s);
    std::optional<Intake::Remembered> decision;
    if (remember) decision.emplace(Intake::Remembered{cart, placed});
    benchmark::DoNotOptimize(memory.leave(key, entered, std::move(decision)));
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_FreshKeyMemoryOff(benchmark::State& state) {
  static Memory memory(0ms, Intake::kReplayMemoryCapacity);
  run(state, memory, false);
}
BENCHMARK(BM_FreshKeyMemoryOff)->Threads(1)->Threads(8)->UseRealTime();

void BM_FreshKeyMemoryOn(benchmark::State& state) {
  static Memory memory(30s, Intake::kReplayMemoryCapacity);
  run(state, memory, true);
}
BENCHMARK(BM_FreshKeyMemoryOn)->Threads(1)->Threads(8)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
