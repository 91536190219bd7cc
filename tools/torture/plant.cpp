#include "plant.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "checker.hpp"

namespace onceorder::torture {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Rewrites the history's lines (parsed) in place.
using HistoryEdit = std::function<void(std::vector<Json>&)>;

// One violation a real bug would leave, planted into a copy of a clean run.
struct Planting {
  std::string name;          // the check that must report it
  std::string sql;           // applied to the copy's database (may be empty)
  std::string what;          // the bug it stands for
  HistoryEdit edit_history;  // may be empty
};

// The ok answers to orders (201), in history order.
std::vector<Json*> placed_answers(std::vector<Json>& lines) {
  std::vector<Json*> out;
  for (auto& j : lines)
    if (j.value("phase", "") == "ok" && j.value("type", "") == "order" &&
        j.value("status", 0) == 201)
      out.push_back(&j);
  return out;
}

std::vector<Planting> plantings() {
  const std::string first_placed =
      "(SELECT order_id FROM order_receipts WHERE outcome = 'placed' ORDER BY order_id LIMIT 1)";
  return {
      {"orders_acked",
       "DELETE FROM stock_ledger WHERE order_id = " + first_placed +
           "; DELETE FROM order_receipts WHERE order_id = " + first_placed,
       "an acknowledged order lost (its receipt and ledger entries gone)",
       {}},
      {"orders_whole",
       "DELETE FROM stock_ledger WHERE entry_id = (SELECT min(g.entry_id) FROM stock_ledger g "
       "JOIN orders o ON o.order_id = g.order_id WHERE o.status = 'placed' AND g.kind = "
       "'reservation')",
       "an order stored without one line's reservation (a partial commit)",
       {}},
      {"orders_from_history",
       "INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, "
       "normalization, outcome, shortages) VALUES (1, 'never-sent', 1, '[]', 1, 'out_of_stock', "
       "'[]')",
       "a receipt no client asked for",
       {}},
      {"order_numbers_unique", "",
       "one order number answered to two keys (ids from two nodes that collided)",
       [](std::vector<Json>& lines) {
         auto placed = placed_answers(lines);
         for (Json* j : placed) {
           if ((*j)["response"]["order_id"] == (*placed.front())["response"]["order_id"]) continue;
           (*j)["response"]["order_no"] = (*placed.front())["response"]["order_no"];
           return;
         }
       }},
      {"cancels",
       "UPDATE orders SET status = 'placed', cancelled_at = NULL WHERE status = 'cancelled'",
       "an acknowledged cancel undone",
       {}},
      {"cancelled_not_produced",
       "UPDATE orders SET status = 'cancelled' WHERE order_no IN (SELECT order_no FROM "
       "production_orders WHERE site_code = 'W1')",
       "a produced order cancelled (the cancel/production race)",
       {}},
      {"documents_contiguous",
       "DELETE FROM document_receipts WHERE scope = 'S1' AND value = 2; DELETE FROM documents "
       "WHERE scope = 'S1' AND value = 2",
       "a gap in a scope's numbers",
       {}},
      {"documents_unique", "", "one number answered to two requests (MAX+1 without a lock)",
       [](std::vector<Json>& lines) {
         Json* first = nullptr;
         for (auto& j : lines) {
           if (j.value("phase", "") != "ok" || j.value("type", "") != "document") continue;
           if (!first) {
             first = &j;
           } else if (j["response"].value("scope", "") == (*first)["response"].value("scope", "") &&
                      j["response"].value("title", "") != (*first)["response"].value("title", "")) {
             j["response"]["value"] = (*first)["response"]["value"];
             j["response"]["number"] = (*first)["response"]["number"];
             return;
           }
         }
       }},
      {"documents_acked",
       "UPDATE documents SET title = 'another title' WHERE scope = 'S2' AND value = 1",
       "an acknowledged number stored for another document",
       {}},
      {"documents_once",
       "INSERT INTO documents (scope, value, number, origin, scheme, title) SELECT scope, "
       "value + 1000000, 'x', 'legacy', 'dec4', title FROM documents WHERE scope = 'S3' AND "
       "value = 1",
       "one request that made two documents",
       {}},
      {"stock_conserved",
       "UPDATE stock SET available = available + 1 WHERE sku_id = 1",
       "stock changed without a ledger entry",
       {}},
      {"source_orders",
       "UPDATE source_orders SET quantity = quantity + 100 WHERE rowid = (SELECT min(rowid) FROM "
       "source_orders WHERE site_code = 'T')",
       "an acknowledged source order stored otherwise than sent",
       {}},
      {"production_settled",
       "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES ('T', "
       "'never-produced', '1', 1)",
       "a live source order that no run ever produced",
       {}},
      {"answers_identical", "", "a replay answered otherwise than the first answer",
       [](std::vector<Json>& lines) {
         std::map<std::int64_t, std::string> keys;  // op id → key
         std::map<std::string, int> answers;
         for (auto& j : lines)
           if (j.value("phase", "") == "invoke" && j.value("type", "") == "order")
             keys[j.value("id", std::int64_t{0})] = j["request"].value("key", "");
         for (Json* j : placed_answers(lines)) {
           if (++answers[keys[j->value("id", std::int64_t{0})]] == 2) {
             (*j)["response"]["total_cents"] = -1;
             return;
           }
         }
       }},
  };
}

void edit_history(const fs::path& path, const HistoryEdit& edit) {
  std::vector<Json> lines;
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) lines.push_back(Json::parse(line));
  }
  edit(lines);
  std::ofstream out(path);
  for (const auto& j : lines) out << j.dump() << '\n';
}

}  // namespace

int plant(const fs::path& clean_run, const std::string& onceorder_bin) {
  int missed = 0;
  for (const Planting& p : plantings()) {
    const fs::path dir = clean_run.parent_path() / ("plant-" + p.name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(clean_run / "torture.db", dir / "torture.db");
    fs::copy_file(clean_run / "history.jsonl", dir / "history.jsonl");
    Database db = Database::sqlite((dir / "torture.db").string());
    if (!p.sql.empty()) db.exec(p.sql);
    if (p.edit_history) edit_history(dir / "history.jsonl", p.edit_history);
    bool caught = false;
    std::vector<std::string> others;
    for (const auto& c :
         check(load_history((dir / "history.jsonl").string()), db, {6, onceorder_bin, 5})) {
      if (c.violations == 0) continue;
      if (c.name == p.name)
        caught = true;
      else
        others.push_back(c.name);
    }
    std::cout << fmt::format(
        "plant {}: {} ({}){}\n", p.name, caught ? "caught" : "NOT CAUGHT", p.what,
        others.empty() ? "" : fmt::format("; also {}", fmt::join(others, ", ")));
    if (!caught) ++missed;
  }
  return missed == 0 ? 0 : 1;
}

}  // namespace onceorder::torture
