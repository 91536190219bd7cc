#include "poller.hpp"

#include <fcntl.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "e2e/http_client.hpp"

namespace onceorder::torture {
namespace {

// The integrator's query: a plain id cursor.
constexpr const char* kPollSql =
    "SELECT event_id, type, key, to_char(occurred_at AT TIME ZONE 'UTC', "
    "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), data FROM event_feed WHERE event_id > $1::bigint "
    "ORDER BY event_id LIMIT $2::integer";

// The event as OnceOrder sends it (the same fields and bytes for its data).
std::string poller_body(PGresult* res, int row) {
  const auto text = [&](int col) { return nlohmann::json(PQgetvalue(res, row, col)).dump(); };
  return std::string("{\"id\":") + PQgetvalue(res, row, 0) + ",\"type\":" + text(1) +
         ",\"key\":" + text(2) + ",\"occurred_at\":" + text(3) +
         ",\"data\":" + PQgetvalue(res, row, 4) + "}";
}

void save_last(const std::string& path, std::int64_t last) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << last << '\n';
  }
  std::filesystem::rename(tmp, path);
}

// POSTs until the receiver answers 2xx: the integrator's "retry until it worked".
void post_until_taken(std::unique_ptr<testing::HttpClient>& client, std::uint16_t port,
                      const std::string& id, const std::string& body) {
  for (;;) {
    try {
      const auto res = client->post("/events", body, {{"Idempotency-Key", id}});
      if (res.status / 100 == 2) return;
    } catch (const std::exception&) {
      client = std::make_unique<testing::HttpClient>(port, std::chrono::seconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

std::int64_t poller_saved(const std::string& state_path) {
  std::ifstream in(state_path);
  std::int64_t last = 0;
  if (in) in >> last;
  return last;
}

int poll_main(const PollerOptions& o) {
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(o.db_url.c_str()), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    std::cerr << "poller: " << PQerrorMessage(conn.get());
    return 2;
  }
  auto client = std::make_unique<testing::HttpClient>(o.port, std::chrono::seconds(10));
  std::int64_t last = poller_saved(o.state_path);
  const std::string batch = std::to_string(o.batch);
  for (;;) {
    const std::string after = std::to_string(last);
    const char* params[] = {after.c_str(), batch.c_str()};
    std::unique_ptr<PGresult, decltype(&PQclear)> res(
        PQexecParams(conn.get(), kPollSql, 2, nullptr, params, nullptr, nullptr, 0), &PQclear);
    if (PQresultStatus(res.get()) != PGRES_TUPLES_OK) {
      std::cerr << "poller: " << PQerrorMessage(conn.get());
      PQreset(conn.get());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    const int rows = PQntuples(res.get());
    for (int i = 0; i < rows; ++i)
      post_until_taken(client, o.port, PQgetvalue(res.get(), i, 0), poller_body(res.get(), i));
    if (rows > 0) {
      last = std::stoll(PQgetvalue(res.get(), rows - 1, 0));
      save_last(o.state_path, last);
    }
    if (rows < o.batch) std::this_thread::sleep_for(o.interval);
  }
}

std::string settle_poller(const Database& db, const std::string& state_path,
                          std::chrono::seconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  std::int64_t before = -1;
  for (;;) {
    const std::int64_t head = db.number("SELECT coalesce(max(event_id), 0) FROM events");
    const std::int64_t saved = poller_saved(state_path);
    if (saved >= head && head == before) return "";
    before = saved >= head ? head : -1;
    if (std::chrono::steady_clock::now() >= until)
      return "poller: saved " + std::to_string(saved) + " of " + std::to_string(head);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

PollerProcess::PollerProcess(std::vector<std::string> argv, std::string log_path)
    : argv_(std::move(argv)), log_path_(std::move(log_path)) {}

PollerProcess::~PollerProcess() { kill_hard(); }

bool PollerProcess::start() {
  if (pid_ > 0) return true;
  std::vector<char*> argv;
  for (auto& a : argv_) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_ = fork();
  if (pid_ == 0) {  // only async-signal-safe calls from here on
    if (log >= 0) {
      dup2(log, 1);
      dup2(log, 2);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (log >= 0) close(log);
  return pid_ > 0;
}

void PollerProcess::kill_hard() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace onceorder::torture
