// Load driver for order intake: N client threads place orders for a fixed time through
// Intake::place (--mode store, in-process, no HTTP; with --batch B, Intake::place_batch of B
// orders at a time, so that bench/batch-cost.sh can take a batch's cost apart by size) or
// through the HTTP server (--mode http: in-process server, real sockets on loopback, one
// keep-alive connection per client, POST /v1/orders). Every order is a cart of K distinct
// random SKUs of the catalog 1..S in warehouse 1 (quantity 1 each), with a fresh Idempotency-Key
// ("b-<thread>-<counter>") and customer_id = thread + 1. Prints `tps=<placed orders/s>`
// for bench/run-intake.sh, which measures the raw-SQL baselines of the same transaction
// with pgbench in the same run.
//
// Set-up: the catalog's stock rows are created with Stock::put_sku (available 10^11,
// existing SKUs are left alone), so the same database serves every case; the script
// restores `available` between cases. --setup-only creates the catalog and exits.
//
// Exits non-zero unless every answer was `placed` (busy answers are reported separately
// from other failures; both count as not placed).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "e2e/http_client.hpp"
#include "onceorder/http/http_server.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"
#include "onceorder/store/store.hpp"

namespace {

using namespace onceorder;
using Seconds = std::chrono::duration<double>;

constexpr std::int64_t kWarehouse = 1;
constexpr std::int64_t kStock = 100'000'000'000;  // never runs out during a run

store::Clock::time_point in(int seconds) {
  return store::Clock::now() + std::chrono::seconds(seconds);
}

const store::Statement kCountStock{
    "bench_count_stock",
    "SELECT count(*) FROM stock WHERE warehouse_id = $1 AND sku_id BETWEEN 1 AND $2"};

Result<std::int64_t> count_stock(store::Database& db, std::int64_t catalog) {
  OO_ASSIGN_OR_RETURN(auto conn, db.acquire(in(10)));
  OO_ASSIGN_OR_RETURN(auto rows, conn->query(kCountStock, {kWarehouse, catalog}));
  return rows.at(0).i64(0);
}

// Creates SKUs 1..catalog that do not exist yet (several threads: each put_sku commits).
Status setup_catalog(store::Database& db, std::int64_t catalog, int threads) {
  OO_ASSIGN_OR_RETURN(const std::int64_t have, count_stock(db, catalog));
  if (have == catalog) return Status::Ok();
  Stock stock(db);
  std::atomic<std::int64_t> next{1};
  std::mutex mu;
  Status first_error = Status::Ok();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::int64_t sku = next++; sku <= catalog; sku = next++) {
        auto r = stock.put_sku(kWarehouse, sku, 1000 + sku % 100, kStock, in(30));
        if (!r.ok() && r.status().code() != Code::use_adjustment) {  // exists: keep it
          std::lock_guard lock(mu);
          if (first_error.ok()) first_error = r.status();
          return;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  return first_error;
}

// K distinct SKUs of 1..S, uniformly (rejection sampling: K ≤ 20, so cheap).
void random_cart(std::mt19937_64& rng, int k, std::int64_t catalog, std::vector<CartLine>& out) {
  out.clear();
  std::uniform_int_distribution<std::int64_t> pick(1, catalog);
  while (static_cast<int>(out.size()) < k) {
    const std::int64_t sku = pick(rng);
    if (std::none_of(out.begin(), out.end(), [&](const CartLine& l) { return l.sku_id == sku; }))
      out.push_back({sku, 1});
  }
}

enum class Outcome { placed, not_placed, busy, failed };

// One client's way of placing an order; `error` says what went wrong when failed.
using PlaceOne = std::function<Outcome(const PlaceRequest&, std::string& error)>;

Outcome outcome_of(const Result<Placed>& r, std::string& error) {
  if (r.ok()) return r->out_of_stock || r->replayed ? Outcome::not_placed : Outcome::placed;
  if (r.status().code() == Code::busy) return Outcome::busy;
  error = r.status().to_string();
  return Outcome::failed;
}

PlaceOne store_client(Intake& intake) {
  return [&intake](const PlaceRequest& req, std::string& error) {
    return outcome_of(intake.place(req, store::Clock::now() + std::chrono::seconds(5)), error);
  };
}

PlaceOne http_client(std::uint16_t port) {
  auto client = std::make_shared<testing::HttpClient>(port);
  return [client](const PlaceRequest& req, std::string& error) {
    std::string body = fmt::format(R"({{"customer_id":{},"warehouse_id":{},"lines":[)",
                                   req.customer_id, req.warehouse_id);
    for (size_t i = 0; i < req.lines.size(); ++i) {
      body += fmt::format(R"({}{{"sku_id":{},"quantity":{}}})", i ? "," : "", req.lines[i].sku_id,
                          req.lines[i].quantity);
    }
    body += "]}";
    testing::HttpResponse res;
    try {
      res = client->post(
          "/v1/orders", body,
          {{"Content-Type", "application/json"}, {"Idempotency-Key", req.idempotency_key}});
    } catch (const std::exception& e) {
      error = std::string("connection: ") + e.what();
      return Outcome::failed;
    }
    if (res.status == 201) return Outcome::placed;
    if (res.status == 503) return Outcome::busy;
    if (res.status == 409 && res.body.find("out_of_stock") != std::string::npos)
      return Outcome::not_placed;
    error = fmt::format("HTTP {}: {}", res.status, res.body.substr(0, 200));
    return Outcome::failed;
  };
}

struct ClientStats {
  std::uint64_t placed = 0, out_of_stock = 0, busy = 0, failed = 0;
  std::vector<float> latency_us;
  std::map<std::string, std::uint64_t> errors;  // code/message → count (failures only)
};

double percentile(std::vector<float>& v, double p) {
  if (v.empty()) return 0;
  const auto i = static_cast<size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"OnceOrder order-intake load driver"};
  std::string db_url, mode = "store";
  int clients = 1, k = 5, seconds = 10;
  std::int64_t catalog = 10000;
  bool setup_only = false;
  int batch = 0;
  app.add_option("--db", db_url, "database URL")->required();
  app.add_option("--mode", mode, "store | http")->check(CLI::IsMember({"store", "http"}));
  app.add_option("--clients", clients, "client threads")->check(CLI::Range(1, 256));
  app.add_option("--skus-per-cart", k, "distinct SKUs per order")
      ->check(CLI::Range(1, kMaxCartSkus));
  app.add_option("--catalog", catalog, "SKUs 1..S of warehouse 1 to pick from")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{10'000'000}));
  app.add_option("--seconds", seconds, "duration")->check(CLI::Range(1, 3600));
  app.add_flag("--setup-only", setup_only, "create the catalog's stock rows and exit");
  app.add_option("--batch", batch,
                 "store mode: each client places N orders at a time in one transaction "
                 "(Intake::place_batch, the combined path whatever the load; bench/batch-cost.sh)")
      ->check(CLI::Range(1, static_cast<int>(Intake::kMaxBatch)));
  CLI11_PARSE(app, argc, argv);
  if (batch > 0 && mode != "store") return std::cerr << "--batch needs --mode store\n", 2;
  if (k > catalog) {
    std::cerr << fmt::format("--skus-per-cart {} needs a catalog of at least {} SKUs\n", k, k);
    return 2;
  }

  auto url = parse_db_url(db_url);
  if (!url.ok()) return std::cerr << url.status().message() << '\n', 2;
  store::DatabaseOptions options;
  options.pool_size = clients + 1;
  auto db = store::Database::open(*url, options);
  if (!db.ok()) return std::cerr << db.status().message() << '\n', 2;
  if (auto v = store::migrate(**db); !v.ok()) return std::cerr << v.status().message() << '\n', 2;
  Intake intake(**db);

  const auto setup_start = store::Clock::now();
  if (Status st = setup_catalog(**db, catalog, setup_only ? clients : 1); !st.ok())
    return std::cerr << "set-up: " << st.to_string() << '\n', 2;
  if (setup_only) {
    std::cout << fmt::format("catalog={} ready in {:.1f} s\n", catalog,
                             Seconds(store::Clock::now() - setup_start).count());
    return 0;
  }
  // Lease the node id before timing (the first place() would otherwise pay for it).
  if (auto node = intake.node_id(); !node.ok())
    return std::cerr << "node id: " << node.status().to_string() << '\n', 2;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Server> server;
  std::uint16_t port = 0;
  if (mode == "http") {
    scheduler = std::make_unique<Scheduler>(**db);
    ServerOptions so;
    so.listen = "127.0.0.1:0";
    so.workers = clients;
    auto started = Server::start(**db, *scheduler, intake, so);
    if (!started.ok()) return std::cerr << started.status().to_string() << '\n', 2;
    server = std::move(*started);
    port = server->port();
  }

  std::vector<ClientStats> stats(static_cast<size_t>(clients));
  std::barrier start(clients + 1);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&, t] {
      ClientStats& s = stats[static_cast<size_t>(t)];
      PlaceOne place = mode == "http" ? http_client(port) : store_client(intake);
      std::string error;
      s.latency_us.reserve(1 << 16);
      std::mt19937_64 rng(std::random_device{}() ^ (static_cast<std::uint64_t>(t) << 32));
      PlaceRequest req;
      req.customer_id = t + 1;
      req.warehouse_id = kWarehouse;
      // Keys never repeat across runs on the same database: a per-process prefix.
      const std::string prefix = fmt::format("b-{:x}-{}-", static_cast<std::uint32_t>(rng()), t);
      std::uint64_t counter = 0;
      start.arrive_and_wait();
      const auto count = [&s](Outcome outcome, const std::string& why, float latency_us) {
        switch (outcome) {
          case Outcome::placed:
            ++s.placed;
            s.latency_us.push_back(latency_us);
            break;
          case Outcome::not_placed:  // out of stock or a replay: neither may happen here
            ++s.out_of_stock;
            break;
          case Outcome::busy:
            ++s.busy;
            break;
          case Outcome::failed:
            ++s.failed;
            ++s.errors[why];
            break;
        }
      };
      const auto micros = [](auto d) {
        return std::chrono::duration<float, std::micro>(d).count();
      };
      std::vector<PlaceRequest> reqs(static_cast<size_t>(batch), req);  // --batch
      while (!stop.load(std::memory_order_relaxed)) {
        if (batch == 0) {
          random_cart(rng, k, catalog, req.lines);
          req.idempotency_key = prefix + std::to_string(++counter);
          const auto t0 = store::Clock::now();
          const Outcome outcome = place(req, error);
          count(outcome, error, micros(store::Clock::now() - t0));
          continue;
        }
        for (PlaceRequest& r : reqs) {
          random_cart(rng, k, catalog, r.lines);
          r.idempotency_key = prefix + std::to_string(++counter);
        }
        const auto t0 = store::Clock::now();
        const auto answers = intake.place_batch(reqs, t0 + std::chrono::seconds(5));
        const float latency_us = micros(store::Clock::now() - t0);
        for (const auto& answer : answers) count(outcome_of(answer, error), error, latency_us);
      }
    });
  }
  start.arrive_and_wait();
  const auto t_start = store::Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed = Seconds(store::Clock::now() - t_start).count();
  if (server) {
    server->stop();
    server->wait();
  }

  ClientStats all;
  for (auto& s : stats) {
    all.placed += s.placed;
    all.out_of_stock += s.out_of_stock;
    all.busy += s.busy;
    all.failed += s.failed;
    all.latency_us.insert(all.latency_us.end(), s.latency_us.begin(), s.latency_us.end());
    for (auto& [e, n] : s.errors) all.errors[e] += n;
  }
  for (auto& [e, n] : all.errors) std::cerr << fmt::format("{} × {}\n", n, e);
  const auto& m = (*db)->metrics();
  const double p50 = percentile(all.latency_us, 0.50), p99 = percentile(all.latency_us, 0.99);
  std::cout << fmt::format(
      "mode={} clients={} skus_per_cart={} catalog={} seconds={:.2f} placed={} not_placed={} "
      "busy={} failed={} retries_deadlock={} retries_lock_timeout={} p50_ms={:.3f} "
      "p99_ms={:.3f} tps={:.0f}\n",
      mode, clients, k, catalog, elapsed, all.placed, all.out_of_stock + all.busy + all.failed,
      all.busy, all.failed, m.retries_deadlock.load(), m.retries_lock_timeout.load(), p50 / 1000,
      p99 / 1000, static_cast<double>(all.placed) / elapsed);
  return all.out_of_stock + all.busy + all.failed == 0 ? 0 : 1;
}
