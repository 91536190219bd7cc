// Two `serve` processes behind PgBouncer (Debian's `pgbouncer`), in transaction and in session
// pooling, under concurrent orders, numbers and runs: no 5xx but 503 busy, one maintenance
// leader (one lease term, one "now runs" line), `check` clean afterwards, and both processes
// migrating one empty database at once. PostgreSQL only; skipped without a pgbouncer binary
// unless ONCEORDER_REQUIRE_PG=1 (then missing pgbouncer fails).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/test_db.hpp"
#include "e2e/http_client.hpp"
#include "e2e/serve_process.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

std::string pgb_env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string pgb_binary() {
  for (const char* p : {"/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

std::uint16_t pgb_free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

bool pgb_accepts(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

// PgBouncer in a temp directory, in front of the PostgreSQL the PG* variables name, with
// trust authentication for the one user of pg_virtualenv (its password goes to the server).
class PgBouncer {
 public:
  PgBouncer(const std::string& mode, int pool_size) : port_(pgb_free_port()) {
    dir_ = std::filesystem::temp_directory_path() /
           ("onceorder-pgb-" + std::to_string(getpid()) + "-" + mode);
    std::filesystem::create_directories(dir_);
    chmod(dir_.c_str(), 0777);  // run as nobody when we are root
    const std::string user = pgb_env("PGUSER", pgb_env("USER", "postgres").c_str());
    std::ofstream(dir_ / "users.txt") << '"' << user << "\" \"\"\n";
    std::string server = "host=" + pgb_env("PGHOST", "/var/run/postgresql") +
                         " port=" + pgb_env("PGPORT", "5432") + " user=" + user;
    if (!pgb_env("PGPASSWORD").empty()) server += " password=" + pgb_env("PGPASSWORD");
    std::ofstream(dir_ / "pgbouncer.ini")
        << "[databases]\n* = " << server << "\n[pgbouncer]\nlisten_addr = 127.0.0.1\n"
        << "listen_port = " << port_ << "\nunix_socket_dir =\nauth_type = trust\n"
        << "auth_file = " << (dir_ / "users.txt").string() << "\npool_mode = " << mode
        << "\ndefault_pool_size = " << pool_size << "\nmax_client_conn = 200\n"
        << "logfile = " << (dir_ / "pgbouncer.log").string()
        << "\npidfile = " << (dir_ / "pgbouncer.pid").string() << "\nadmin_users = " << user
        << "\n";
    const std::string bin = pgb_binary();
    const std::string ini = (dir_ / "pgbouncer.ini").string();
    pid_ = fork();
    if (pid_ == 0) {
      const int null = open("/dev/null", O_RDWR);
      dup2(null, 1);
      dup2(null, 2);
      if (geteuid() == 0)
        execl(bin.c_str(), bin.c_str(), "-u", "nobody", ini.c_str(), static_cast<char*>(nullptr));
      else
        execl(bin.c_str(), bin.c_str(), ini.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 250 && !pgb_accepts(port_); ++i) std::this_thread::sleep_for(20ms);
  }
  ~PgBouncer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::uint16_t port() const { return port_; }
  std::string url(const std::string& db, const std::string& extra) const {
    return "postgresql://" + pgb_env("PGUSER", pgb_env("USER", "postgres").c_str()) +
           "@127.0.0.1:" + std::to_string(port_) + "/" + db + extra;
  }
  std::string log() const {
    std::ifstream in(dir_ / "pgbouncer.log");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  std::uint16_t port_;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

size_t pgb_count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct PgbMode {
  const char* pool_mode;
  const char* url_option;
  // Server connections. Transaction pooling shares fewer than the two processes' pools;
  // session pooling gives each client connection a server connection for its life, so it
  // needs every one: 2 × (--pool-size 4 + 3 of the server's own: the invariants, readiness and
  // outbox gauges of the monitor) + the migration lock's.
  int server_connections;
};

// One client's share of the load until `until`: orders, document numbers and manual runs.
void pgb_load(std::uint16_t port, int t, std::chrono::steady_clock::time_point until,
              std::atomic<int>& ok, std::atomic<int>& busy, std::atomic<int>& bad, std::mutex& mu,
              std::string& first_bad) {
  HttpClient c(port, 15s);
  for (int i = 0; std::chrono::steady_clock::now() < until; ++i) {
    HttpResponse r;
    switch ((i + t) % 4) {
      case 0:
      case 1:
        r = c.post("/v1/orders",
                   R"({"customer_id": 1, "warehouse_id": 1, "lines": [{"sku_id": )" +
                       std::to_string(1 + (i + t) % 8) + R"(, "quantity": 1}, {"sku_id": )" +
                       std::to_string(1 + (i + t + 3) % 8) + R"(, "quantity": 2}]})",
                   {{"Idempotency-Key", "k-" + std::to_string(t) + "-" + std::to_string(i)}});
        break;
      case 2:
        r = c.post("/v1/scopes/S" + std::to_string(i % 3) + "/documents", R"({"title": "x"})");
        break;
      default:
        r = c.post("/v1/schedule/runs?wait=false", "{}");
        break;
    }
    const bool is_busy = r.status == 503 && r.body.find("\"busy\"") != std::string::npos;
    if (r.status >= 500 && !is_busy) {
      bad.fetch_add(1);
      std::lock_guard lock(mu);
      if (first_bad.empty()) first_bad = std::to_string(r.status) + " " + r.body;
    } else if (is_busy) {
      busy.fetch_add(1);
    } else {
      ok.fetch_add(1);
    }
  }
}

class PgBouncerTest : public ::testing::TestWithParam<PgbMode> {};

TEST_P(PgBouncerTest, TwoServersUnderLoadOneLeaderCheckClean) {
  if (!postgres_configured()) GTEST_SKIP() << "PostgreSQL not configured";
  if (pgb_binary().empty()) {
    if (pgb_env("ONCEORDER_REQUIRE_PG") == "1") FAIL() << "pgbouncer is not installed";
    GTEST_SKIP() << "pgbouncer is not installed (scripts/bootstrap)";
  }
  TestDb tdb(Engine::postgres);  // empty: both servers migrate it at once
  PgBouncer bouncer(GetParam().pool_mode, GetParam().server_connections);
  ASSERT_TRUE(pgb_accepts(bouncer.port())) << "pgbouncer did not start";
  const std::string url = bouncer.url(tdb.name(), GetParam().url_option);
  const std::vector<std::string> args = {"--pool-size",     "4",  "--batch-interval",      "1s",
                                         "--reap-interval", "1s", "--invariants-interval", "1s"};
  ServeProcess a(url, args), b(url, args);
  const std::uint16_t ports[2] = {a.port(), b.port()};
  ASSERT_NE(ports[0], 0) << a.output();
  ASSERT_NE(ports[1], 0) << b.output();
  {
    HttpClient setup(ports[0], 10s);
    for (int sku = 1; sku <= 8; ++sku)
      ASSERT_EQ(setup
                    .put("/v1/warehouses/1/skus/" + std::to_string(sku),
                         R"({"price_cents": 100, "available": 100000})")
                    .status,
                201);
  }
  std::atomic<int> ok{0}, busy{0}, bad{0};
  std::mutex mu;
  std::string first_bad;
  const auto until = std::chrono::steady_clock::now() + 4s;
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      // A client that times out fails the test here rather than ending the process, which
      // would leave PgBouncer and the servers running.
      try {
        pgb_load(ports[t % 2], t, until, ok, busy, bad, mu, first_bad);
      } catch (const std::exception& e) {
        bad.fetch_add(1);
        std::lock_guard lock(mu);
        if (first_bad.empty()) first_bad = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0) << first_bad << "\n" << a.output() << b.output();
  EXPECT_GT(ok.load(), 100) << "busy=" << busy.load();
  // The batch ran under the leader meanwhile (every second): something was produced.
  EXPECT_GT(tdb.sql("SELECT count(*) FROM production_orders").at(0).i64(0), 0);
  // One leader all along: one lease term, one process saying it leads.
  const auto lease = tdb.sql("SELECT term FROM leader_leases WHERE name = 'maintenance'");
  ASSERT_EQ(lease.size(), 1u);
  EXPECT_EQ(lease.at(0).i64(0), 1);
  const std::string leads = "now runs the batch and the reaper";
  EXPECT_EQ(pgb_count(a.output(), leads) + pgb_count(b.output(), leads), 1u)
      << a.output() << b.output();
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  EXPECT_EQ(a.wait_exit(20s), 0);
  EXPECT_EQ(b.wait_exit(20s), 0);
  const char* bin_env = std::getenv("ONCEORDER_BIN");
  const std::string bin = bin_env ? bin_env : "./onceorder";
  const std::string cmd = bin + " --db '" + url + "' check 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(WEXITSTATUS(pclose(p)), 0) << out;
  EXPECT_EQ(pgb_count(bouncer.log(), "already exists"), 0u) << bouncer.log();
}

INSTANTIATE_TEST_SUITE_P(Pooling, PgBouncerTest,
                         ::testing::Values(PgbMode{"transaction", "?pooler=transaction", 6},
                                           PgbMode{"session", "", 16}),
                         [](const ::testing::TestParamInfo<PgbMode>& p) {
                           return std::string(p.param.pool_mode);
                         });

}  // namespace
}  // namespace onceorder::testing
