// Order ids per second in-process (Google Benchmark): one thread, and several threads
// sharing one generator. The raw baseline is the clock read alone, which every id needs.
#include <benchmark/benchmark.h>

#include <chrono>

#include "onceorder/core/id_generator.hpp"

namespace {

using onceorder::IdGenerator;

void BM_ClockRead(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(std::chrono::system_clock::now());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ClockRead);

IdGenerator& shared_generator() {
  static IdGenerator gen(1, 0);
  return gen;
}

void BM_NextId(benchmark::State& state) {
  IdGenerator& gen = shared_generator();
  for (auto _ : state) {
    auto id = gen.next();
    benchmark::DoNotOptimize(id);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NextId)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
