// The end-to-end fixture: a fresh database per test (an SQLite file, and also a fresh
// PostgreSQL database when PGHOST or PGDATABASE is set, e.g. under pg_virtualenv), migrated,
// with the process's Scheduler and Intake, an in-process Server on a free loopback port and
// a client talking to it.
#pragma once

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "e2e/http_client.hpp"
#include "onceorder/http_server.hpp"
#include "onceorder/intake.hpp"
#include "onceorder/scheduling.hpp"
#include "onceorder/store.hpp"

namespace onceorder::testing {

inline bool postgres_configured() {
  return std::getenv("PGHOST") != nullptr || std::getenv("PGDATABASE") != nullptr;
}

inline std::vector<Engine> test_engines() {
  std::vector<Engine> out{Engine::sqlite};
  if (postgres_configured()) out.push_back(Engine::postgres);
  return out;
}

inline std::string engine_param_name(const ::testing::TestParamInfo<Engine>& info) {
  return info.param == Engine::sqlite ? "sqlite" : "postgres";
}

inline std::string random_suffix() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

// A throwaway database, removed on destruction.
class ScratchDatabase {
 public:
  explicit ScratchDatabase(Engine engine) : engine_(engine) {
    if (engine == Engine::sqlite) {
      path_ = (std::filesystem::temp_directory_path() /
               fmt::format("oo_e2e_{}_{}.db", ::getpid(), random_suffix()))
                  .string();
      url_ = "sqlite:" + path_;
    } else {
      name_ = "oo_e2e_" + random_suffix();
      admin(fmt::format("CREATE DATABASE {}", name_));
      url_ = "postgresql:///" + name_;
    }
  }
  ~ScratchDatabase() {
    if (engine_ == Engine::sqlite) {
      for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + ext);
    } else {
      admin(fmt::format("DROP DATABASE IF EXISTS {} WITH (FORCE)", name_));
    }
  }
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;

  const std::string& url() const { return url_; }

 private:
  // Runs one statement on the default database (PG* variables say which).
  static void admin(const std::string& sql) {
    PGconn* conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
      const std::string err = PQerrorMessage(conn);
      PQfinish(conn);
      throw std::runtime_error("cannot reach PostgreSQL: " + err);
    }
    PGresult* r = PQexec(conn, sql.c_str());
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    const std::string err = PQerrorMessage(conn);
    PQclear(r);
    PQfinish(conn);
    if (!ok) throw std::runtime_error(sql + ": " + err);
  }

  Engine engine_;
  std::string path_;
  std::string name_;
  std::string url_;
};

class HttpTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    spdlog::set_level(std::getenv("ONCEORDER_TEST_LOG") ? spdlog::level::info
                                                        : spdlog::level::warn);
    scratch_ = std::make_unique<ScratchDatabase>(GetParam());
    open_database({});
    if (HasFatalFailure()) return;
    start_server({});
  }

  void TearDown() override {
    client_.reset();
    server_.reset();
    intake_.reset();
    scheduler_.reset();
    db_.reset();
    scratch_.reset();
  }

  // (Re)opens the database with `options` (stops the server first), with a new Scheduler
  // (`scheduling` options) and Intake.
  void open_database(store::DatabaseOptions options, SchedulerOptions scheduling = {}) {
    client_.reset();
    server_.reset();
    intake_.reset();
    scheduler_.reset();
    db_.reset();
    auto url = parse_db_url(scratch_->url());
    ASSERT_TRUE(url.ok()) << url.status().to_string();
    auto db = store::Database::open(*url, options);
    ASSERT_TRUE(db.ok()) << db.status().to_string();
    db_ = std::move(db).value();
    auto version = store::migrate(*db_);
    ASSERT_TRUE(version.ok()) << version.status().to_string();
    scheduler_ = std::make_unique<Scheduler>(*db_, std::move(scheduling));
    intake_ = std::make_unique<Intake>(*db_);
  }

  // (Re)starts the server on a free loopback port.
  void start_server(ServerOptions options) {
    client_.reset();
    server_.reset();
    if (options.listen == ServerOptions{}.listen) options.listen = "127.0.0.1:0";
    auto server = Server::start(*db_, *scheduler_, *intake_, std::move(options));
    ASSERT_TRUE(server.ok()) << server.status().to_string();
    server_ = std::move(server).value();
    client_ = std::make_unique<HttpClient>(server_->port());
  }

  HttpClient& client() { return *client_; }
  store::Database& db() { return *db_; }
  Scheduler& scheduler() { return *scheduler_; }
  Intake& intake() { return *intake_; }
  Server& server() { return *server_; }
  std::uint16_t port() const { return server_->port(); }

  std::string write_file(const std::string& name, const std::string& text) {
    const auto path =
        (std::filesystem::temp_directory_path() / fmt::format("{}_{}", random_suffix(), name))
            .string();
    std::ofstream(path) << text;
    files_.push_back(path);
    return path;
  }

  ~HttpTest() override {
    for (const auto& f : files_) std::filesystem::remove(f);
  }

 private:
  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<Intake> intake_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpClient> client_;
  std::vector<std::string> files_;
};

// Checks a problem+json answer: status, code, and (when given) exactly these field names.
inline void expect_problem(const HttpResponse& r, int status, const std::string& code,
                           const std::vector<std::string>& fields = {}) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/problem+json") << r.body;
  const auto body = nlohmann::json::parse(r.body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << r.body;
  EXPECT_EQ(body.value("code", ""), code) << r.body;
  EXPECT_EQ(body.value("status", 0), status) << r.body;
  EXPECT_TRUE(body.contains("type") && body.contains("title") && body.contains("detail")) << r.body;
  if (!fields.empty()) {
    std::vector<std::string> got;
    for (const auto& e : body.value("errors", nlohmann::json::array())) {
      got.push_back(e.value("field", ""));
      EXPECT_FALSE(e.value("message", "").empty()) << r.body;
    }
    EXPECT_EQ(got, fields) << r.body;
  }
}

}  // namespace onceorder::testing
