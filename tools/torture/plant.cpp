#include "plant.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>

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

// The receive lines of one receiver, in the history's order.
std::vector<size_t> received_by(const std::vector<Json>& lines, const std::string& endpoint) {
  std::vector<size_t> out;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].value("phase", "") == "receive" && lines[i].value("endpoint", "") == endpoint)
      out.push_back(i);
  return out;
}

// The at_least_once receiver never got one event: its lines are gone.
void lose_delivery(std::vector<Json>& lines) {
  const auto alo = received_by(lines, "alo");
  if (alo.empty()) return;
  const auto id = lines[alo.front()].value("event_id", std::int64_t{0});
  std::erase_if(lines, [&](const Json& j) {
    return j.value("phase", "") == "receive" && j.value("endpoint", "") == "alo" &&
           j.value("event_id", std::int64_t{0}) == id;
  });
}

// The at_most_once receiver acted on one event once more, with no word from the operator.
void send_again(std::vector<Json>& lines) {
  std::set<std::int64_t> worded;
  for (const auto& j : lines)
    if (j.value("phase", "") == "operator" && j.value("action", "") == "resolve")
      for (const auto& id : j.value("event_ids", Json::array()))
        worded.insert(id.get<std::int64_t>());
  for (size_t i : received_by(lines, "amo")) {
    if (!lines[i].value("acted", false) ||
        worded.contains(lines[i].value("event_id", std::int64_t{0})))
      continue;
    Json copy = lines[i];
    copy.erase("body");
    lines.push_back(copy);
    return;
  }
}

// The feed answered one event on two pages: a cursor that pointed one event back.
void repeat_in_feed(std::vector<Json>& lines) {
  Json* previous = nullptr;
  for (auto& j : lines) {
    if (j.value("phase", "") != "feed" || j["events"].empty()) continue;
    if (previous) {
      j["events"].insert(j["events"].begin(), (*previous)["events"].back());
      return;
    }
    previous = &j;
  }
}

// A key's later event arrived first: its first arrival moved before the earlier event's.
void overtake(std::vector<Json>& lines) {
  std::map<std::string, size_t> first_of_key;  // key → the line of its first event's arrival
  std::set<std::int64_t> arrived;
  for (size_t i : received_by(lines, "alo")) {
    const auto id = lines[i].value("event_id", std::int64_t{0});
    if (!arrived.insert(id).second) continue;
    const std::string key = lines[i].value("event_key", "");
    auto [it, fresh] = first_of_key.emplace(key, i);
    if (fresh) continue;
    Json later = lines[i];
    lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(i));
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(it->second), later);
    return;
  }
}

// One request acted on whose signature does not hold (a receiver that skipped the check).
void forge_signature(std::vector<Json>& lines) {
  const auto alo = received_by(lines, "alo");
  if (alo.empty()) return;
  std::string sig = lines[alo.back()].value("signature", "");
  if (sig.empty()) return;
  sig.back() = sig.back() == '0' ? '1' : '0';
  lines[alo.back()]["signature"] = sig;
}

void reuse_order_number(std::vector<Json>& lines) {
  auto placed = placed_answers(lines);
  for (Json* j : placed) {
    if ((*j)["response"]["order_id"] == (*placed.front())["response"]["order_id"]) continue;
    (*j)["response"]["order_no"] = (*placed.front())["response"]["order_no"];
    return;
  }
}

void reuse_document_number(std::vector<Json>& lines) {
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
}

void change_replay_answer(std::vector<Json>& lines) {
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
}

// Violations in the database, each a bug's leftovers.
std::vector<Planting> database_plantings() {
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
      {"documents_acked",
       "UPDATE documents SET title = 'another title' WHERE scope = 'S2' AND value = 1",
       "an acknowledged number stored for another document",
       {}},
      {"documents_once",
       "INSERT INTO documents (scope, value, number, origin, scheme, title, principal) SELECT "
       "scope, value + 1000000, 'x', 'legacy', 'dec4', title, 'planted' FROM documents WHERE "
       "scope = 'S3' AND value = 1",
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
  };
}

// Every planting: the database's, then the history's (an answer, the outbox's records).
std::vector<Planting> plantings() {
  std::vector<Planting> list = database_plantings();
  list.insert(
      list.end(),
      {
          {"order_numbers_unique", "",
           "one order number answered to two keys (ids from two nodes that collided)",
           reuse_order_number},
          {"documents_unique", "", "one number answered to two requests (MAX+1 without a lock)",
           reuse_document_number},
          {"answers_identical", "", "a replay answered otherwise than the first answer",
           change_replay_answer},
          {"delivered_at_least_once", "",
           "an event the at_least_once receiver never got (a delivery settled without a 2xx)",
           lose_delivery},
          {"at_most_once_without_word", "",
           "an at_most_once event sent again on its own (an unknown outcome retried)", send_again},
          {"feed_exactly_once", "", "one event on two feed pages (a cursor that went back)",
           repeat_in_feed},
          {"key_order", "",
           "a key's later event arrived before its earlier one (a claim that did not wait)",
           overtake},
          {"signatures", "", "a request acted on whose signature does not verify", forge_signature},
      });
  return list;
}

void write_history(const fs::path& path, const std::vector<Json>& lines) {
  std::ofstream out(path);
  for (const auto& j : lines) out << j.dump() << '\n';
}

void link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (ec) fs::copy_file(from, to);
}

}  // namespace

int plant(const fs::path& clean_run, const std::string& onceorder_bin) {
  int missed = 0;
  const OutboxSpec outbox = OutboxSpec::from_json(
      Json::parse(std::ifstream(clean_run / "run.json"), nullptr, false).value("outbox", Json()));
  // Read once: each planting edits a copy of the lines, or checks the clean history as it is.
  const std::vector<Json> clean_lines = read_history_lines((clean_run / "history.jsonl").string());
  const History clean = history_from_lines(clean_lines);
  for (const Planting& p : plantings()) {
    const fs::path dir = clean_run.parent_path() / ("plant-" + p.name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    // A file the planting leaves as it is is the clean run's own (a hard link: the histories
    // and databases of 19 plantings would take hundreds of megabytes).
    if (p.sql.empty())
      link_or_copy(clean_run / "torture.db", dir / "torture.db");
    else
      fs::copy_file(clean_run / "torture.db", dir / "torture.db");
    fs::copy_file(clean_run / "run.json", dir / "run.json");
    Database db = Database::sqlite((dir / "torture.db").string());
    if (!p.sql.empty()) db.exec(p.sql);
    History edited;
    if (p.edit_history) {
      std::vector<Json> lines = clean_lines;
      p.edit_history(lines);
      write_history(dir / "history.jsonl", lines);
      edited = history_from_lines(lines);
    } else {
      link_or_copy(clean_run / "history.jsonl", dir / "history.jsonl");
    }
    // A planting in the history alone leaves the database as it was: its invariants too.
    const CheckOptions options{6, p.sql.empty() ? "" : onceorder_bin, 5, outbox};
    bool caught = false;
    std::vector<std::string> others;
    for (const auto& c : check(p.edit_history ? edited : clean, db, options)) {
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
