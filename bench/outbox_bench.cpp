// Drivers of bench/outbox-feed.sh and bench/outbox-push.sh (docs/BENCHMARKS.md, "The outbox:
// feed, push and lag"):
//   feed        reads OnceOrder's whole feed, GET /v1/events?after=&limit= following
//               next_after over one keep-alive connection, until a page is not full (the
//               cursor and the count are taken from the text: the client only reads);
//   raw-feed    the raw-SQL outbox read of the same events from `outbox_copy` (a hand-written
//               outbox table, the payload stored in the row) with libpq, `id > $1 ORDER BY id
//               LIMIT $2` in a loop (the naive cursor EVENTS.md §2 shows losing late commits:
//               a ceiling, not a design);
//   raw-worker  the raw-SQL outbox worker over `outbox_copy` (the same table): per batch
//               BEGIN; claim `FOR UPDATE SKIP LOCKED`; POST each; mark the delivered ones
//               sent; COMMIT. The POSTs are made exactly as OnceOrder's
//               worker makes them (delivery_request: the same body and signed headers) and
//               sent with its WebhookSender (a batch at once, a connection each), so the
//               difference to OnceOrder is the outbox's database work alone.
// Each prints one line `events=N seconds=S rate=R ...` for the script.
#include <utility>  // before any Asio header (Boost 1.74)

#include <libpq-fe.h>
#include <sys/resource.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/webhook_sender.hpp"
#include "onceorder/service/outbox.hpp"

namespace {

using namespace onceorder;
using SteadyClock = std::chrono::steady_clock;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

double seconds_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

// This process's CPU seconds (user + system): a client that uses most of a core would be
// measuring itself.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void print_result(std::uint64_t events, double seconds, double cpu, const std::string& extra) {
  std::cout << fmt::format("events={} seconds={:.3f} rate={:.0f} client_cpu_s={:.2f} {}\n", events,
                           seconds, static_cast<double>(events) / seconds, cpu, extra);
}

// Events on a feed page: each starts with {"id": (event_json's first member; no event's
// data holds an object that starts so). The script checks the total against the table.
std::uint64_t count_events(std::string_view body) {
  std::uint64_t n = 0;
  for (std::size_t at = body.find("{\"id\":"); at != std::string_view::npos;
       at = body.find("{\"id\":", at + 1)) {
    ++n;
  }
  return n;
}

std::string next_after(std::string_view body) {
  constexpr std::string_view kKey = "\"next_after\":\"";
  const std::size_t at = body.rfind(kKey);
  if (at == std::string_view::npos) return {};
  const std::size_t from = at + kKey.size();
  return std::string(body.substr(from, body.find('"', from) - from));
}

// A blocking keep-alive HTTP/1.1 GET client with a large read buffer: the tests' HttpClient
// reads a body 512 bytes at a time, which costs more than the server's page here.
class FeedClient {
 public:
  explicit FeedClient(std::uint16_t port) : socket_(io_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
    socket_.set_option(tcp::no_delay(true));
    buf_.reserve(4 << 20);
    // bench/lib.sh's serve_start makes the server's one token and exports it.
    if (const char* token = std::getenv("ONCEORDER_TOKEN")) {
      authorization_ = fmt::format("Authorization: Bearer {}\r\n", token);
    }
  }
  // The body of a 200 answer to GET `target`; throws on any other answer.
  std::string get(const std::string& target) {
    const std::string req =
        fmt::format("GET {} HTTP/1.1\r\nHost: 127.0.0.1\r\n{}\r\n", target, authorization_);
    asio::write(socket_, asio::buffer(req));
    const std::size_t head = asio::read_until(socket_, asio::dynamic_buffer(buf_), "\r\n\r\n");
    const std::string_view h(buf_.data(), head);
    constexpr std::string_view kLength = "\r\ncontent-length: ";
    auto it = std::search(h.begin(), h.end(), kLength.begin(), kLength.end(),
                          [](char a, char b) { return std::tolower(a) == b; });
    if (!h.starts_with("HTTP/1.1 200") || it == h.end()) {
      throw std::runtime_error("feed: unexpected answer: " + std::string(h));
    }
    std::size_t len = 0;
    const char* at = &*it + kLength.size();
    std::from_chars(at, h.data() + h.size(), len);
    if (buf_.size() < head + len) {
      asio::read(socket_, asio::dynamic_buffer(buf_),
                 asio::transfer_exactly(head + len - buf_.size()));
    }
    std::string body = buf_.substr(head, len);
    buf_.erase(0, head + len);
    return body;
  }

 private:
  asio::io_context io_;
  tcp::socket socket_;
  std::string buf_;
  std::string authorization_;
};

int read_feed(std::uint16_t port, int limit) {
  FeedClient client(port);
  std::string after = "0";
  std::uint64_t events = 0, pages = 0, bytes = 0;
  const double cpu0 = cpu_seconds();
  const auto t0 = SteadyClock::now();
  for (;;) {
    const std::string body = client.get(fmt::format("/v1/events?after={}&limit={}", after, limit));
    const std::uint64_t n = count_events(body);
    ++pages;
    bytes += body.size();
    events += n;
    after = next_after(body);
    if (after.empty()) return std::cerr << "feed: no next_after\n", 1;
    if (n < static_cast<std::uint64_t>(limit)) break;
  }
  print_result(events, seconds_since(t0), cpu_seconds() - cpu0,
               fmt::format("pages={} bytes={}", pages, bytes));
  return 0;
}

struct Pg {
  PGconn* conn = nullptr;
  explicit Pg(const std::string& conninfo) : conn(PQconnectdb(conninfo.c_str())) {
    if (PQstatus(conn) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn));
  }
  ~Pg() { PQfinish(conn); }
  Pg(const Pg&) = delete;
  Pg& operator=(const Pg&) = delete;
  // Runs a prepared statement (or, with no name, `sql` itself) and checks its status.
  std::unique_ptr<PGresult, void (*)(PGresult*)> run(const char* name, const char* sql,
                                                     std::vector<const char*> params = {}) {
    PGresult* r = name ? PQexecPrepared(conn, name, static_cast<int>(params.size()), params.data(),
                                        nullptr, nullptr, 0)
                       : PQexec(conn, sql);
    const auto st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
      const std::string e = PQresultErrorMessage(r);
      PQclear(r);
      throw std::runtime_error(e);
    }
    return {r, PQclear};
  }
  void prepare(const char* name, const char* sql) {
    PGresult* r = PQprepare(conn, name, sql, 0, nullptr);
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    const std::string e = PQresultErrorMessage(r);
    PQclear(r);
    if (!ok) throw std::runtime_error(e);
  }
};

int raw_feed(const std::string& conninfo, int limit) {
  Pg pg(conninfo);
  pg.prepare("page",
             "SELECT id, type, key, occurred_at, data FROM outbox_copy WHERE id > $1 ORDER BY id "
             "LIMIT $2");
  const std::string lim = std::to_string(limit);
  std::string after = "0";
  std::uint64_t events = 0, pages = 0, bytes = 0;
  const double cpu0 = cpu_seconds();
  const auto t0 = SteadyClock::now();
  for (;;) {
    auto r = pg.run("page", nullptr, {after.c_str(), lim.c_str()});
    const int n = PQntuples(r.get());
    ++pages;
    events += static_cast<std::uint64_t>(n);
    for (int i = 0; i < n; ++i) {
      for (int f = 0; f < 5; ++f) bytes += static_cast<std::uint64_t>(PQgetlength(r.get(), i, f));
    }
    if (n > 0) after = PQgetvalue(r.get(), n - 1, 0);
    if (n < limit) break;
  }
  print_result(events, seconds_since(t0), cpu_seconds() - cpu0,
               fmt::format("pages={} bytes={}", pages, bytes));
  return 0;
}

struct WorkerSetup {
  std::string conninfo, url, secret;
  int batch = 32;
};

// The requests of one claimed batch, made as OnceOrder's worker makes them.
std::vector<SendRequest> batch_requests(PGresult* rows, const WorkerSetup& s) {
  std::vector<SendRequest> out;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  for (int i = 0; i < PQntuples(rows); ++i) {
    DeliveryClaim c;
    c.url = s.url;
    c.secret = s.secret;
    c.attempt = 1;
    c.event.id = std::stoll(PQgetvalue(rows, i, 0));
    c.event.type = PQgetvalue(rows, i, 1);
    c.event.key = PQgetvalue(rows, i, 2);
    c.event.occurred_at = PQgetvalue(rows, i, 3);
    c.event.data = PQgetvalue(rows, i, 4);
    out.push_back(delivery_request(c, now));
  }
  return out;
}

// One worker's loop until a claim finds nothing; returns the events it marked sent.
std::uint64_t raw_worker_loop(const WorkerSetup& s, Sender& sender) {
  Pg pg(s.conninfo);
  pg.prepare("claim",
             "SELECT id, type, key, occurred_at, data FROM outbox_copy WHERE sent_at IS NULL "
             "ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED");
  pg.prepare("sent", "UPDATE outbox_copy SET sent_at = now() WHERE id = ANY($1::bigint[])");
  const std::string lim = std::to_string(s.batch);
  std::uint64_t sent = 0;
  for (;;) {
    pg.run(nullptr, "BEGIN");
    auto rows = pg.run("claim", nullptr, {lim.c_str()});
    if (PQntuples(rows.get()) == 0) {
      pg.run(nullptr, "COMMIT");
      return sent;
    }
    const auto requests = batch_requests(rows.get(), s);
    const auto reports = sender.send(requests, std::chrono::seconds(10));
    std::string ids = "{";
    for (std::size_t i = 0; i < reports.size(); ++i) {
      if (reports[i].result != SendResult::delivered) {
        throw std::runtime_error("a POST failed: " + reports[i].error);
      }
      if (i > 0) ids += ',';
      ids += PQgetvalue(rows.get(), static_cast<int>(i), 0);
    }
    ids += '}';
    pg.run("sent", nullptr, {ids.c_str()});
    pg.run(nullptr, "COMMIT");
    sent += reports.size();
  }
}

int raw_worker(const WorkerSetup& s, int workers) {
  http::WebhookSender sender;
  std::atomic<std::uint64_t> sent{0};
  std::atomic<bool> failed{false};
  const double cpu0 = cpu_seconds();
  const auto t0 = SteadyClock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      try {
        sent += raw_worker_loop(s, sender);
      } catch (const std::exception& e) {
        std::cerr << "raw worker: " << e.what() << '\n';
        failed = true;
      }
    });
  }
  for (auto& t : threads) t.join();
  print_result(sent.load(), seconds_since(t0), cpu_seconds() - cpu0,
               fmt::format("workers={} batch={}", workers, s.batch));
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"OnceOrder outbox benchmark drivers"};
  app.require_subcommand(1);
  int limit = 1000, workers = 1;
  int port = 0;
  WorkerSetup setup;
  auto* feed = app.add_subcommand("feed", "read OnceOrder's whole feed over HTTP");
  feed->add_option("--port", port)->required();
  feed->add_option("--limit", limit)->check(CLI::Range(1, 1000));
  auto* rfeed = app.add_subcommand("raw-feed", "the raw-SQL read of outbox_copy by id");
  rfeed->add_option("--db", setup.conninfo, "libpq conninfo")->required();
  rfeed->add_option("--limit", limit)->check(CLI::Range(1, 100000));
  auto* rwork = app.add_subcommand("raw-worker", "the raw-SQL outbox worker over outbox_copy");
  rwork->add_option("--db", setup.conninfo, "libpq conninfo")->required();
  rwork->add_option("--url", setup.url, "the receiver")->required();
  rwork->add_option("--secret", setup.secret)->required();
  rwork->add_option("--workers", workers)->check(CLI::Range(1, 64));
  rwork->add_option("--batch", setup.batch)->check(CLI::Range(1, 256));
  CLI11_PARSE(app, argc, argv);
  try {
    if (*feed) return read_feed(static_cast<std::uint16_t>(port), limit);
    if (*rfeed) return raw_feed(setup.conninfo, limit);
    return raw_worker(setup, workers);
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
}
