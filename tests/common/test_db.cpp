#include "common/test_db.hpp"

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <utility>

#include <nlohmann/json.hpp>

#include "onceorder/core/db_url.hpp"
#include "onceorder/service/invariants.hpp"
#include "store/postgres/pg_connection.hpp"

namespace onceorder::testing {
namespace {

std::string unique_suffix() {
  static std::atomic<int> counter{0};
  static const auto seed = std::random_device{}();
  return std::to_string(getpid()) + "_" + std::to_string(seed % 100000) + "_" +
         std::to_string(counter.fetch_add(1));
}

// Runs `sql` on the maintenance database: the error, empty when it worked.
std::string try_admin_exec(const std::string& sql) {
  PGconn* c = PQconnectdb("dbname=postgres");
  std::string error;
  if (PQstatus(c) != CONNECTION_OK) {
    error = PQerrorMessage(c);
  } else {
    PGresult* r = PQexec(c, sql.c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK) error = PQerrorMessage(c);
    PQclear(r);
  }
  PQfinish(c);
  return error;
}

void admin_exec(const std::string& sql) {
  const std::string error = try_admin_exec(sql);
  EXPECT_TRUE(error.empty()) << error << " in: " << sql;
}

// A new Database (own pool) on `url`, migrated if `migrated`; null, the test failed, if not.
std::unique_ptr<store::Database> open_database(const std::string& url,
                                               store::DatabaseOptions options, bool migrated) {
  auto parsed = parse_db_url(url);
  EXPECT_TRUE(parsed.ok());
  auto db = store::Database::open(*parsed, options);
  EXPECT_TRUE(db.ok()) << db.status().to_string();
  if (!db.ok()) return nullptr;
  if (migrated) {
    auto v = store::migrate(**db);
    EXPECT_TRUE(v.ok()) << v.status().to_string();
  }
  return std::move(db).value();
}

// The test program's migrated PostgreSQL database, copied by each TestDb opened migrated;
// dropped when the program ends.
class MigratedTemplate {
 public:
  MigratedTemplate() : name_("oo_tpl_" + unique_suffix()) {
    admin_exec("CREATE DATABASE " + name_);
    // Closed at once: PostgreSQL copies only a database no one is connected to.
    open_database("postgresql:///" + name_, {.pool_size = 1}, true);
  }
  ~MigratedTemplate() {
    // After main() returns: no gtest assertion here, only a best-effort drop.
    try_admin_exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  }
  MigratedTemplate(const MigratedTemplate&) = delete;
  MigratedTemplate& operator=(const MigratedTemplate&) = delete;

  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

const std::string& migrated_template() {
  static const MigratedTemplate one;
  return one.name();
}

}  // namespace

bool postgres_configured() {
  return std::getenv("PGHOST") != nullptr || std::getenv("PGDATABASE") != nullptr ||
         std::getenv("PGPORT") != nullptr;
}

std::vector<Engine> engines_under_test() {
  std::vector<Engine> out{Engine::sqlite};
  const char* require = std::getenv("ONCEORDER_REQUIRE_PG");
  if (postgres_configured() || (require && std::string(require) == "1"))
    out.push_back(Engine::postgres);
  return out;
}

std::string engine_param_name(const ::testing::TestParamInfo<Engine>& info) {
  return std::string(engine_name(info.param));
}

TestDb::TestDb(Engine engine) : engine_(engine) {
  if (engine == Engine::sqlite) {
    auto dir = std::filesystem::temp_directory_path() / "onceorder-tests";
    std::filesystem::create_directories(dir);
    name_ = (dir / ("t_" + unique_suffix() + ".db")).string();
    url_ = "sqlite:" + name_;
  } else {
    if (!postgres_configured()) {
      ADD_FAILURE() << "ONCEORDER_REQUIRE_PG=1 but no PG* variables: run under pg_virtualenv";
    }
    name_ = "oo_t_" + unique_suffix();
    url_ = "postgresql:///" + name_;
  }
}

TestDb::~TestDb() {
  if (engine_ == Engine::sqlite) {
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(name_ + ext);
  } else if (created_) {
    admin_exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  }
}

void TestDb::create(bool migrated) const {
  if (engine_ != Engine::postgres || created_) return;
  created_ = true;
  admin_exec("CREATE DATABASE " + name_ + (migrated ? " TEMPLATE " + migrated_template() : ""));
}

std::unique_ptr<store::Database> TestDb::open(store::DatabaseOptions options, bool migrated) {
  create(migrated);
  return open_database(url_, options, migrated);
}

store::Rows TestDb::sql(const std::string& text) {
  auto db = open({.pool_size = 1}, false);
  auto conn = db->acquire(soon());
  EXPECT_TRUE(conn.ok());
  // Unprepared, so that any SQL text works: a one-off statement name per text.
  static std::atomic<int> n{0};
  const std::string name = "adhoc_" + std::to_string(n.fetch_add(1));
  store::Statement stmt{name, text};
  // On SQLite, a write (anything but a SELECT) is a write transaction of its own: it then takes
  // its turn among the process's writers (store/sqlite/writer_turns.hpp) instead of polling
  // for the lock behind them. A SELECT reads without a lock, as before, even while a writer of
  // this or another process holds it.
  const auto first = text.find_first_not_of(" \t\n");
  const bool select = first != std::string::npos && (text.compare(first, 6, "SELECT") == 0 ||
                                                     text.compare(first, 6, "select") == 0);
  const bool own_tx = engine_ == Engine::sqlite && !select;
  if (own_tx) {
    EXPECT_TRUE((*conn)->begin(store::TxMode::write).ok());
  }
  auto rows = (*conn)->query(stmt, {}, own_tx ? store::Then::commit : store::Then::stay);
  if (!rows.ok() && own_tx) (*conn)->rollback();
  EXPECT_TRUE(rows.ok()) << rows.status().to_string() << " in: " << text;
  return rows.ok() ? std::move(rows).value() : store::Rows{};
}

void expect_index_reads(RawPg& pg, const store::Statement& statement, const std::string& args,
                        const std::string& relation) {
  // "Seq Scan ", "Index Scan order_receipts_pkey", "Bitmap Heap Scan " (over an index), …
  std::vector<std::string> reads;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& node) {
    if (node.value("Relation Name", "") == relation && node.value("Node Type", "") != "ModifyTable")
      reads.push_back(node.value("Node Type", "") + " " + node.value("Index Name", ""));
    for (const auto& child : node.value("Plans", nlohmann::json::array())) walk(child);
  };
  pg.exec("DEALLOCATE ALL");
  pg.exec("PREPARE probe AS " + std::string(statement.sql));
  for (const char* mode : {"force_generic_plan", "force_custom_plan"}) {
    pg.exec(std::string("SET plan_cache_mode = ") + mode);
    const auto plan = nlohmann::json::parse(pg.scalar("EXPLAIN (FORMAT JSON) EXECUTE probe" + args),
                                            nullptr, /*allow_exceptions=*/false);
    reads.clear();
    if (plan.is_array() && !plan.empty()) walk(plan.at(0).at("Plan"));
    EXPECT_FALSE(reads.empty()) << statement.name << ", " << mode << ": no read of " << relation
                                << " in " << plan.dump();
    for (const std::string& how : reads)
      EXPECT_NE(how.rfind("Seq Scan", 0), 0u) << statement.name << ", " << mode << ": " << how;
  }
  pg.exec("RESET plan_cache_mode");
}

RawPg::RawPg(const std::string& url) {
  PGconn* c = PQconnectdb(url.c_str());
  EXPECT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
  conn_ = c;
  PQsetNoticeReceiver(
      c,
      [](void* self, const PGresult* r) {
        static_cast<std::vector<std::string>*>(self)->emplace_back(PQresultErrorMessage(r));
      },
      &notices_);
}

RawPg::~RawPg() { PQfinish(static_cast<PGconn*>(conn_)); }

void RawPg::exec(const std::string& sql) {
  PGresult* r = PQexec(static_cast<PGconn*>(conn_), sql.c_str());
  const auto st = PQresultStatus(r);
  EXPECT_TRUE(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
      << PQerrorMessage(static_cast<PGconn*>(conn_)) << " in: " << sql;
  PQclear(r);
}

std::string RawPg::scalar(const std::string& sql) {
  PGresult* r = PQexec(static_cast<PGconn*>(conn_), sql.c_str());
  EXPECT_EQ(PQresultStatus(r), PGRES_TUPLES_OK)
      << PQerrorMessage(static_cast<PGconn*>(conn_)) << " in: " << sql;
  std::string out;
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0) out = PQgetvalue(r, 0, 0);
  PQclear(r);
  return out;
}

std::vector<std::string> RawPg::notices(const std::string& sql) {
  notices_.clear();
  exec(sql);
  return std::exchange(notices_, {});
}

void expect_invariants_hold(store::Database& db) {
  auto inv = check_invariants(db, soon());
  ASSERT_TRUE(inv.ok()) << inv.status().to_string();
  for (const auto& r : *inv)
    EXPECT_EQ(r.violations, 0) << r.id << ": " << (r.sample.empty() ? "" : r.sample[0]);
}

std::string onceorder_bin() {
  const char* b = std::getenv("ONCEORDER_BIN");
  return b ? b : "./onceorder";
}

store::Clock::time_point soon(int seconds) {
  return store::Clock::now() + std::chrono::seconds(seconds);
}

}  // namespace onceorder::testing
