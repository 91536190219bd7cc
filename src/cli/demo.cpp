#include "cli/demo.hpp"

#include <fmt/format.h>

#include "onceorder/service/intake.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::cli {
namespace {

store::Clock::time_point deadline() { return store::Clock::now() + std::chrono::seconds(30); }

Status demo_documents(store::Database& db, std::ostream& out) {
  Numbering numbering(db);
  // A project whose legacy system wrote three-digit decimal numbers up to 295.
  if (!numbering.scope("TEST-001", deadline()).ok()) {
    std::string csv = "number,title\n";
    for (int v = 290; v <= 295; ++v) csv += fmt::format("{},legacy document {}\n", v, v);
    auto r = numbering.import_legacy("TEST-001", LegacyScheme::dec3, csv, deadline());
    if (!r.ok()) return r.status();
  }
  for (int i = 1; i <= 3; ++i) {
    auto r = numbering.issue(
        {"TEST-001", fmt::format("demo document {}", i), fmt::format("demo-{}", i)}, deadline());
    if (!r.ok()) return r.status();
    out << fmt::format("TEST-001 document {} {}\n", r->document.number,
                       r->replayed ? "(already there)" : "issued");
  }
  // A hexadecimal scope, as the old system's hex3 numbers were.
  auto hex = numbering.configure("HEX-A", ScopeFormat{3, 16, 0xFFF}, deadline());
  if (!hex.ok()) return hex.status();
  auto r = numbering.issue({"HEX-A", "first hex document", std::string("demo-hex-1")}, deadline());
  if (!r.ok()) return r.status();
  out << fmt::format("HEX-A document {} {}\n", r->document.number,
                     r->replayed ? "(already there)" : "issued");
  return Status::Ok();
}

Status demo_orders(store::Database& db, std::ostream& out) {
  Intake intake(db);
  Stock stock(db);
  // Notebooks and chargers, as in the cart example: the second order finds no charger.
  for (auto [sku, available, price] : {std::tuple{101, 5, 1200}, std::tuple{202, 1, 2500}}) {
    auto s = stock.get_sku(1, sku, deadline());
    if (s.ok()) continue;
    auto put = stock.put_sku(1, sku, price, available, deadline());
    if (!put.ok()) return put.status();
  }
  for (const char* key : {"demo-order-1", "demo-order-2"}) {
    auto placed = intake.place({7, 1, {{101, 2}, {202, 1}}, key}, deadline());
    if (!placed.ok()) return placed.status();
    if (placed->out_of_stock) {
      out << fmt::format("order {}: out of stock (sku {} has {})\n", key,
                         placed->shortages.at(0).sku_id, placed->shortages.at(0).available);
    } else {
      out << fmt::format("order {}: {} {}\n", key, placed->order.order_no,
                         placed->replayed ? "(already there)" : "placed");
    }
  }
  return Status::Ok();
}

Status demo_schedule(store::Database& db, std::ostream& out) {
  Scheduler scheduler(db);
  std::vector<SourceOrder> orders;
  for (int i = 1; i <= 5; ++i) orders.push_back({{"F1", fmt::format("A1234{}", i), "1"}, 10 * i});
  auto imported = scheduler.import_source_orders(orders, deadline());
  if (!imported.ok()) return imported.status();
  auto run = scheduler.create_run(RunKind::manual, std::nullopt, deadline());
  if (!run.ok()) return run.status();
  auto done = scheduler.process_run(run->run.run_id);
  if (!done.ok()) return done.status();
  out << fmt::format("schedule run {}: {} production orders made\n", done->run_id,
                     done->counts.success);
  return Status::Ok();
}

}  // namespace

Status load_demo(store::Database& db, std::ostream& out) {
  OO_RETURN_IF_ERROR(demo_documents(db, out));
  OO_RETURN_IF_ERROR(demo_orders(db, out));
  return demo_schedule(db, out);
}

}  // namespace onceorder::cli
