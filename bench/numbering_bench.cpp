// Load driver for document-number allocation: N client threads issue numbers for a fixed
// time, through the store (the Numbering service, no HTTP) or through the HTTP server
// (in-process, real sockets on loopback, keep-alive). Prints `tps=<n>` for
// bench/run-numbering.sh, which measures the raw-SQL baselines with pgbench in the same run.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <barrier>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "e2e/http_client.hpp"
#include "onceorder/http/http_server.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/store/store.hpp"

namespace {

using namespace onceorder;

std::string scope_name(int i) { return "bench-" + std::to_string(i); }

// One client's loop: `issue_one` returns false on a failed request (counted, not fatal).
template <class IssueOne>
void drive(int clients, int seconds, std::atomic<std::uint64_t>& ok,
           std::atomic<std::uint64_t>& failed, const std::function<IssueOne()>& make_client) {
  std::barrier start(clients + 1);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      IssueOne issue_one = make_client();
      start.arrive_and_wait();
      while (!stop.load(std::memory_order_relaxed)) (issue_one() ? ok : failed).fetch_add(1);
    });
  }
  start.arrive_and_wait();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& t : threads) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"OnceOrder document-number load driver"};
  std::string db_url, mode = "store";
  int clients = 1, scopes = 1, seconds = 10;
  app.add_option("--db", db_url, "database URL")->required();
  app.add_option("--mode", mode, "store | http")->check(CLI::IsMember({"store", "http"}));
  app.add_option("--clients", clients)->check(CLI::Range(1, 256));
  app.add_option("--scopes", scopes)->check(CLI::Range(1, 10000));
  app.add_option("--seconds", seconds)->check(CLI::Range(1, 3600));
  CLI11_PARSE(app, argc, argv);

  auto url = parse_db_url(db_url);
  if (!url.ok()) return std::cerr << url.status().message() << '\n', 2;
  store::DatabaseOptions options;
  options.pool_size = clients;
  auto db = store::Database::open(*url, options);
  if (!db.ok()) return std::cerr << db.status().message() << '\n', 2;
  if (auto v = store::migrate(**db); !v.ok()) return std::cerr << v.status().message() << '\n', 2;
  Numbering numbering(**db);
  for (int s = 1; s <= scopes; ++s) {
    auto r = numbering.configure(scope_name(s), ScopeFormat{9, 10, 999999999},
                                 store::Clock::now() + std::chrono::seconds(10));
    if (!r.ok()) return std::cerr << r.status().message() << '\n', 2;
  }

  std::atomic<std::uint64_t> ok{0}, failed{0};
  std::mutex error_mu;
  int errors_shown = 0;
  if (mode == "store") {
    using IssueOne = std::function<bool()>;
    drive<IssueOne>(clients, seconds, ok, failed, [&]() -> IssueOne {
      return [&, rng = std::mt19937(std::random_device{}())]() mutable {
        const int s = std::uniform_int_distribution<int>(1, scopes)(rng);
        auto issued = numbering.issue({scope_name(s), "bench", std::nullopt},
                                      store::Clock::now() + std::chrono::seconds(5));
        if (!issued.ok()) {
          std::lock_guard lock(error_mu);  // the first few failures say why
          if (errors_shown++ < 3)
            std::cerr << "issue failed: " << issued.status().to_string() << '\n';
        }
        return issued.ok();
      };
    });
  } else {
    ServerOptions so;
    so.listen = "127.0.0.1:0";
    so.workers = clients;
    Scheduler scheduler(**db);
    Intake intake(**db);
    auto server = Server::start(**db, scheduler, intake, so);
    if (!server.ok()) return std::cerr << server.status().message() << '\n', 2;
    const std::uint16_t port = (*server)->port();
    using IssueOne = std::function<bool()>;
    drive<IssueOne>(clients, seconds, ok, failed, [&]() -> IssueOne {
      auto client = std::make_shared<testing::HttpClient>(port);
      return [client, scopes, rng = std::mt19937(std::random_device{}())]() mutable {
        const int s = std::uniform_int_distribution<int>(1, scopes)(rng);
        try {
          return client
                     ->post("/v1/scopes/" + scope_name(s) + "/documents", R"({"title":"bench"})",
                            {{"Content-Type", "application/json"}})
                     .status == 201;
        } catch (const std::exception&) {
          return false;  // a broken connection counts as a failed request
        }
      };
    });
    (*server)->stop();
    (*server)->wait();
  }
  std::cout << fmt::format("mode={} clients={} scopes={} seconds={} ok={} failed={} tps={:.0f}\n",
                           mode, clients, scopes, seconds, ok.load(), failed.load(),
                           static_cast<double>(ok.load()) / seconds);
  return failed.load() == 0 ? 0 : 1;
}
