// What writing a placed order's answer (src/http/order_json.hpp) costs, in-process (Google
// Benchmark): the text written straight into one string, against building the nlohmann
// object member by member and dumping it (what `serve` did before:
// tests/common/order_json_reference.hpp, the baseline). A 5-line order, as the order benchmarks
// place. docs/BENCHMARKS.md, "The order answer as text".
#include <benchmark/benchmark.h>

#include <string>

#include "common/order_json_reference.hpp"
#include "http/order_json.hpp"

namespace {

using namespace onceorder;

void nlohmann_object(benchmark::State& state) {
  const Order o = testing::sample_order(5);
  for (auto _ : state) {
    std::string text = testing::order_json_reference(o);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(nlohmann_object);

void order_text(benchmark::State& state) {
  const Order o = testing::sample_order(5);
  for (auto _ : state) {
    std::string text = http::order_json_text(o);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(order_text);

}  // namespace

BENCHMARK_MAIN();
