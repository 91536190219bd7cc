// What writing a placed order's answer (src/http/order_json.hpp) costs, in-process (Google
// Benchmark): the text written straight into one string, against building the nlohmann
// object member by member and dumping it (what `serve` did before, kept here as the
// baseline). A 5-line order, as the order benchmarks place. docs/BENCHMARKS.md, "The order
// answer as text".
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <string>

#include "http/order_json.hpp"

namespace {

using namespace onceorder;
using json = nlohmann::json;

Order five_line_order() {
  Order o;
  o.order_id = 7390000000000012345;
  o.order_no = "O2026120600000123";
  o.status = "placed";
  o.customer_id = 1;
  o.warehouse_id = 1;
  o.created_at = "2026-12-06T04:00:00.123Z";
  for (int l = 1; l <= 5; ++l) o.lines.push_back({l, 1000 + l, 1, 100});
  o.total_cents = 500;
  return o;
}

void nlohmann_object(benchmark::State& state) {
  const Order o = five_line_order();
  for (auto _ : state) {
    json lines = json::array();
    for (const OrderLine& l : o.lines) {
      lines.push_back({{"line_no", l.line_no},
                       {"sku_id", l.sku_id},
                       {"quantity", l.quantity},
                       {"unit_price_cents", l.unit_price_cents}});
    }
    const json body = {{"order_id", std::to_string(o.order_id)},
                       {"order_no", o.order_no},
                       {"status", o.status},
                       {"customer_id", o.customer_id},
                       {"warehouse_id", o.warehouse_id},
                       {"lines", std::move(lines)},
                       {"total_cents", o.total_cents},
                       {"created_at", o.created_at}};
    std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(nlohmann_object);

void order_text(benchmark::State& state) {
  const Order o = five_line_order();
  for (auto _ : state) {
    std::string text = http::order_json_text(o);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(order_text);

}  // namespace

BENCHMARK_MAIN();
