// A fresh database per test, on every engine under test: the one fixture of the contract,
// end-to-end, CLI, crash and isolation tests. SQLite always runs; PostgreSQL runs when PG*
// variables point at a server (as under `pg_virtualenv`), and is required when
// ONCEORDER_REQUIRE_PG=1 so that CI can never skip it silently.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "onceorder/store/store.hpp"

namespace onceorder::testing {

// Whether PG* variables (PGHOST, PGDATABASE or PGPORT) say where PostgreSQL is.
bool postgres_configured();
std::vector<Engine> engines_under_test();

// Creates an empty database (a temp SQLite file, or a new PostgreSQL database) and drops
// it on destruction. A PostgreSQL database is created when first used: by open() with
// `migrated` as a copy of a migrated template the test program makes once (migrating takes
// twice as long as copying), else empty, as url(), name() and sql() find it.
// Thread-safety: one thread sets a TestDb up; after that, url() and name() from any.
class TestDb {
 public:
  explicit TestDb(Engine engine);
  ~TestDb();
  TestDb(const TestDb&) = delete;
  TestDb& operator=(const TestDb&) = delete;

  const std::string& url() const {
    create(false);
    return url_;
  }
  // url(), of a database created migrated unless it was created already (open() migrates
  // whichever it finds).
  const std::string& migrated_url() const {
    create(true);
    return url_;
  }
  // The PostgreSQL database's name, or the SQLite file's path: for clients outside OnceOrder.
  const std::string& name() const {
    create(false);
    return name_;
  }
  // Opens a new Database (own pool) on it; migrated unless `migrated` is false.
  std::unique_ptr<store::Database> open(store::DatabaseOptions options = {}, bool migrated = true);
  // Runs SQL outside OnceOrder (a second client), failing the test on error.
  store::Rows sql(const std::string& text);

 private:
  // Creates the PostgreSQL database, a copy of the migrated template if `migrated`, unless
  // it exists already.
  void create(bool migrated) const;

  Engine engine_;
  std::string url_;
  std::string name_;  // database name or file path
  mutable bool created_ = false;
};

// gtest parameter name: "sqlite" / "postgresql".
std::string engine_param_name(const ::testing::TestParamInfo<Engine>& info);

// A raw PostgreSQL session for lock-holding tests (BEGIN; … lock …; COMMIT later).
class RawPg {
 public:
  explicit RawPg(const std::string& url);
  RawPg(const RawPg&) = delete;  // the notice receiver holds `this`
  RawPg& operator=(const RawPg&) = delete;
  ~RawPg();
  void exec(const std::string& sql);
  // The first column of the first row as text ("" when there is none).
  std::string scalar(const std::string& sql);
  // Runs `sql` and returns the server's messages it raised (NOTICE and the like, as
  // client_min_messages lets through), each one element.
  std::vector<std::string> notices(const std::string& sql);

 private:
  void* conn_;
  std::vector<std::string> notices_;  // filled by the connection's notice receiver
};

// PREPAREs `statement` on `pg` and checks that its generic plan and its custom plan for
// `args` (an EXECUTE argument list, "('a', '{1,2}')") read `relation`, and only through an
// index (an index, index-only or bitmap scan), never by a sequential scan, whatever the row
// estimates of its parameters. The ModifyTable node of an UPDATE of `relation` is the write
// itself and is not counted.
void expect_index_reads(RawPg& pg, const store::Statement& statement, const std::string& args,
                        const std::string& relation);

store::Clock::time_point soon(int seconds = 10);

// Every invariant of `db` holds (onceorder/service/invariants.hpp); a violation fails the test with
// its id and first sample row.
void expect_invariants_hold(store::Database& db);

// The `onceorder` binary under test: $ONCEORDER_BIN (ctest sets it), else ./onceorder.
std::string onceorder_bin();

}  // namespace onceorder::testing
