// The `onceorder` binary as an operator uses it: exit codes, messages, and serve's
// start-up refusal and graceful SIGTERM. Runs the built binary (ONCEORDER_BIN).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/test_db.hpp"

namespace {

using onceorder::Engine;
using onceorder::testing::onceorder_bin;
using onceorder::testing::TestDb;

bool postgres_under_test() {
  const auto engines = onceorder::testing::engines_under_test();
  return std::find(engines.begin(), engines.end(), Engine::postgres) != engines.end();
}

struct Run {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// `timeout_seconds` > 0: stopped with SIGTERM after that long (exit code 124 then).
Run run(const std::string& args, int timeout_seconds = 0) {
  Run r;
  const std::string prefix =
      timeout_seconds > 0 ? "timeout " + std::to_string(timeout_seconds) + " " : "";
  FILE* p = popen((prefix + onceorder_bin() + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// stdout of a shell command, without the trailing newline.
std::string run_shell(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class CliTest : public ::testing::Test {
 public:
  CliTest() {
    dir_ = std::filesystem::temp_directory_path() /
           ("onceorder-cli-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    db_ = "--db sqlite:" + (dir_ / "t.db").string();
  }
  ~CliTest() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::string db_;
};

TEST_F(CliTest, MigrateDemoAndCheck) {
  auto m = run(db_ + " migrate");
  EXPECT_EQ(m.exit_code, 0) << m.output;
  EXPECT_NE(m.output.find("schema at version"), std::string::npos);
  auto d = run(db_ + " demo");
  EXPECT_EQ(d.exit_code, 0) << d.output;
  EXPECT_NE(d.output.find("TEST-001 document 0296 issued"), std::string::npos) << d.output;
  // Running the demo again adds nothing.
  auto again = run(db_ + " demo");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("0296 (already there)"), std::string::npos) << again.output;
  auto c = run(db_ + " check --json");
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("\"ok\": true"), std::string::npos) << c.output;
}

TEST_F(CliTest, MigrateDemoAndCheckOnPostgres) {
  if (!postgres_under_test()) GTEST_SKIP() << "PostgreSQL not configured";
  TestDb pg(Engine::postgres);
  const std::string& name = pg.name();
  const std::string db = "--db " + pg.url();
  EXPECT_EQ(run(db + " migrate").exit_code, 0);
  auto d = run(db + " demo");
  EXPECT_EQ(d.exit_code, 0) << d.output;
  EXPECT_NE(d.output.find("TEST-001 document 0296 issued"), std::string::npos) << d.output;
  auto c = run(db + " check");
  EXPECT_EQ(c.exit_code, 0) << c.output;
  ASSERT_EQ(std::system(
                ("psql -qX -d " + name +
                 " -c \"UPDATE doc_scopes SET last_value = last_value + 1 WHERE scope = 'HEX-A'\"")
                    .c_str()),
            0);
  EXPECT_EQ(run(db + " check").exit_code, 1);
}

TEST_F(CliTest, CheckExitsOneOnAViolation) {
  ASSERT_EQ(run(db_ + " demo").exit_code, 0);
  // Damage the data behind OnceOrder's back.
  const std::string sqlite =
      "sqlite3 " + (dir_ / "t.db").string() +
      " \"UPDATE doc_scopes SET last_value = last_value + 5 WHERE scope = 'TEST-001'\"";
  ASSERT_EQ(std::system(sqlite.c_str()), 0);
  auto c = run(db_ + " check");
  EXPECT_EQ(c.exit_code, 1) << c.output;
  EXPECT_NE(c.output.find("FAIL I7"), std::string::npos) << c.output;
}

TEST_F(CliTest, LegacyImportReportsLinesAndWritesNothingOnError) {
  auto bad = write("bad.csv", "number,title\n295,a\n3E8,b\n296,c\n");
  auto r = run(db_ + " legacy import-documents --scope P --scheme dec3 " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("line 3"), std::string::npos) << r.output;
  auto good = write("good.csv", "number\n100\n3E8\n");
  auto ok = run(db_ + " legacy import-documents --scope P --scheme hex3 " + good);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("imported 2 documents into scope 'P'; its counter is at 1000"),
            std::string::npos)
      << ok.output;
  auto missing = run(db_ + " legacy import-documents --scope P --scheme hex3 /nonexistent.csv");
  EXPECT_EQ(missing.exit_code, 2);
  auto scheme = run(db_ + " legacy import-documents --scope P --scheme hex4 " + good);
  EXPECT_EQ(scheme.exit_code, 2);
  EXPECT_NE(scheme.output.find("unknown scheme"), std::string::npos) << scheme.output;
}

// On a terminal (script(1) gives the command a pseudo-terminal) the progress is a bar redrawn
// in place; in a pipe, lines. A dry run writes nothing and so shows no progress.
TEST_F(CliTest, LegacyImportShowsABarOnATerminalAndLinesInAPipe) {
  std::string csv = "number\n";
  for (int i = 1; i <= 40; ++i) csv += fmt::format("{:04}\n", i);
  auto file = write("many.csv", csv);
  auto piped = run(db_ + " legacy import-documents --scope PIPE --scheme dec4 " + file);
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_NE(piped.output.find("40/40 documents (100%)"), std::string::npos) << piped.output;
  EXPECT_EQ(piped.output.find('['), std::string::npos) << piped.output;
  auto dry = run(db_ + " legacy import-documents --scope DRY --scheme dec4 --dry-run " + file);
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_EQ(dry.output.find("documents ("), std::string::npos) << dry.output;
  const std::string tty =
      run_shell("script -qec '" + onceorder_bin() + " " + db_ +
                " legacy import-documents --scope TTY --scheme dec4 " + file + "' /dev/null");
  EXPECT_NE(tty.find("\r[##############################] 40/40 documents (100%)"),
            std::string::npos)
      << tty;
  EXPECT_NE(tty.find("imported 40 documents into scope 'TTY'"), std::string::npos) << tty;
}

TEST_F(CliTest, MixedLegacyHistoryDryRunReportsPerSchemeAndWritesNothing) {
  auto mixed = write("mixed.csv", "number,scheme\n295,dec3\n3E8,hex3\n0296,dec4\n064,hex3\n");
  auto dry = run(db_ + " legacy import-documents --scope MIX --dry-run " + mixed);
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("hex3"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("dry run: nothing was written"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("at 1000"), std::string::npos) << dry.output;
  auto both = run(db_ + " legacy import-documents --scope MIX --scheme dec3 " + mixed);
  EXPECT_EQ(both.exit_code, 2) << both.output;
  auto real = run(db_ + " legacy import-documents --scope MIX " + mixed);
  EXPECT_EQ(real.exit_code, 0) << real.output;
  EXPECT_NE(real.output.find("imported 4 documents"), std::string::npos) << real.output;
  auto again = run(db_ + " legacy import-documents --scope MIX --dry-run " + mixed);
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_NE(again.output.find("line 2: value 295 is already used"), std::string::npos)
      << again.output;
}

// The cutover runbook (docs/CUTOVER.md) on one engine: `sql` runs a statement as the
// operator's database client would. A1 was in flight in the old system at the cutover.
void legacy_cutover(CliTest& t, const std::string& db,
                    const std::function<std::string(const std::string&)>& sql) {
  ASSERT_EQ(run(db + " migrate").exit_code, 0);
  sql("INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES "
      "('S1', 'A1', '1', 5), ('S1', 'B1', '1', 5)");
  auto items = t.write("items.csv",
                       "site_code,order_no,lot_no,status,created_at\n"
                       "S1,A1,1,PROCESSING,2024-03-01T08:00:00Z\n"
                       "S1,B1,1,PROCESSING,2024-03-01T08:00:00Z\n");
  auto staged = run(db + " legacy import-items " + items);
  ASSERT_EQ(staged.exit_code, 0) << staged.output;
  // Long work shows its progress; in a pipe as plain lines, not a bar.
  EXPECT_NE(staged.output.find("2/2 rows (100%)"), std::string::npos) << staged.output;
  EXPECT_EQ(staged.output.find('\r'), std::string::npos) << staged.output;
  auto plan = run(db + " legacy dedup");
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_NE(plan.output.find("2 unresolved"), std::string::npos) << plan.output;
  EXPECT_NE(plan.output.find("UNRESOLVED"), std::string::npos) << plan.output;
  auto refused = run(db + " legacy dedup --apply");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("legacy line 3"), std::string::npos) << refused.output;
  EXPECT_EQ(sql("SELECT count(*) FROM schedule_items"), "0");

  auto bad = t.write("bad.csv", "site_code,order_no,lot_no,outcome\nS1,A1,1,made\nS1,Q1,1,made\n");
  auto rejected = run(db + " legacy resolve " + bad);
  EXPECT_EQ(rejected.exit_code, 2) << rejected.output;
  EXPECT_NE(rejected.output.find("line 3"), std::string::npos) << rejected.output;
  EXPECT_EQ(sql("SELECT count(*) FROM legacy_items WHERE resolution IS NOT NULL"), "0");

  auto good =
      t.write("good.csv", "site_code,order_no,lot_no,outcome\nS1,A1,1,made\nS1,B1,1,not_made\n");
  auto resolved = run(db + " legacy resolve " + good);
  EXPECT_EQ(resolved.exit_code, 0) << resolved.output;
  EXPECT_NE(resolved.output.find("recorded 2 outcomes"), std::string::npos) << resolved.output;
  auto applied = run(db + " legacy dedup --apply");
  EXPECT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_NE(applied.output.find("made -> success"), std::string::npos) << applied.output;
  EXPECT_NE(applied.output.find("not_made -> failed"), std::string::npos) << applied.output;
  EXPECT_NE(applied.output.find("2/2 rows (100%)"), std::string::npos) << applied.output;
  EXPECT_EQ(run(db + " schedule reap").exit_code, 0);
  auto batch = run(db + " schedule batch");
  EXPECT_EQ(batch.exit_code, 0) << batch.output;
  EXPECT_NE(batch.output.find("1 success"), std::string::npos) << batch.output;
  EXPECT_NE(batch.output.find("1/1 items (100%)"), std::string::npos) << batch.output;
  EXPECT_EQ(sql("SELECT order_no FROM production_orders"), "B1");
  auto c = run(db + " check");
  EXPECT_EQ(c.exit_code, 0) << c.output;
}

TEST_F(CliTest, ScheduleRequeueListsTakesTriplesAndSaysWhyNot) {
  ASSERT_EQ(run(db_ + " demo").exit_code, 0);
  auto listed = run(db_ + " schedule requeue --max-attempts 2");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("0 orders reached 2 failed attempts"), std::string::npos)
      << listed.output;
  auto odd = run(db_ + " schedule requeue F1 A12341");
  EXPECT_NE(odd.exit_code, 0) << odd.output;
  EXPECT_NE(odd.output.find("SITE ORDER LOT triples"), std::string::npos) << odd.output;
  auto dry = run(db_ + " schedule requeue --dry-run F1 A12341 1 F1 NONE 1");
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("F1/A12341/1 skipped: already_scheduled"), std::string::npos)
      << dry.output;
  EXPECT_NE(dry.output.find("F1/NONE/1 skipped: unknown_order"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("would re-queue 0 orders"), std::string::npos) << dry.output;
  auto bad = run(db_ + " schedule requeue 'b d' O 1");
  EXPECT_NE(bad.exit_code, 0) << bad.output;
  EXPECT_NE(bad.output.find("site_code"), std::string::npos) << bad.output;
}

TEST_F(CliTest, LegacyCutoverNeedsTheOperatorsWordOnInFlightRows) {
  const std::string file = (dir_ / "t.db").string();
  legacy_cutover(*this, db_, [&](const std::string& q) {
    auto r = run_shell("sqlite3 " + file + " \"" + q + "\"");
    return r;
  });
}

TEST_F(CliTest, LegacyCutoverNeedsTheOperatorsWordOnInFlightRowsOnPostgres) {
  if (!postgres_under_test()) GTEST_SKIP() << "PostgreSQL not configured";
  TestDb pg(Engine::postgres);
  const std::string& name = pg.name();
  legacy_cutover(*this, "--db " + pg.url(), [&](const std::string& q) {
    return run_shell("psql -qXAt -d " + name + " -c \"" + q + "\"");
  });
}

TEST_F(CliTest, BadDatabaseUrlsSayWhatIsWrong) {
  auto bad = run("--db mysql://x migrate");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("expected sqlite:PATH or postgresql://"), std::string::npos)
      << bad.output;
  auto down = run("--db postgresql://127.0.0.1:1/x?connect_timeout=2 migrate");
  EXPECT_EQ(down.exit_code, 2);
  EXPECT_NE(down.output.find("cannot connect to PostgreSQL"), std::string::npos) << down.output;
  // ONCEORDER_DB is read when --db is absent.
  setenv("ONCEORDER_DB", "nonsense", 1);
  auto from_env = run("migrate");
  unsetenv("ONCEORDER_DB");
  EXPECT_EQ(from_env.exit_code, 2);
  EXPECT_NE(from_env.output.find("nonsense"), std::string::npos) << from_env.output;
}

// Issue 8: the URL was printed whole, password included, and libpq's own messages can
// quote parts of it. No form of password reaches the output.
TEST_F(CliTest, PasswordsInDatabaseUrlsAreNeverPrinted) {
  const std::vector<std::string> urls = {
      "'postgresql://u:hunter2secret@127.0.0.1:1/x?connect_timeout=2'",
      "'postgresql://u@127.0.0.1:1/x?connect_timeout=2&password=hunter2secret'",
      "'postgresql://u:hunter2%ZZsecret@127.0.0.1:1/x'",
      "'host=127.0.0.1 port=1 password=hunter2secret'",
  };
  for (const std::string& url : urls) {
    SCOPED_TRACE(url);
    for (const std::string command : {"migrate", "check", "serve --listen 127.0.0.1:0"}) {
      auto r = run("--db " + url + " " + command, /*timeout_seconds=*/20);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_EQ(r.output.find("hunter2"), std::string::npos) << r.output;
      EXPECT_FALSE(r.output.empty());
    }
    setenv("ONCEORDER_DB", url.substr(1, url.size() - 2).c_str(), 1);
    auto from_env = run("migrate");
    unsetenv("ONCEORDER_DB");
    EXPECT_EQ(from_env.exit_code, 2) << from_env.output;
    EXPECT_EQ(from_env.output.find("hunter2"), std::string::npos) << from_env.output;
  }
  // The rest of the URL is still shown: the operator can tell which database it was.
  auto r = run("--db 'postgresql://u:hunter2secret@127.0.0.1:1/x?connect_timeout=2' migrate");
  EXPECT_NE(r.output.find("postgresql://u:***@127.0.0.1:1/x"), std::string::npos) << r.output;
}

// Issue 8: `--tokens "$UNSET"` turned authentication off without a word.
TEST_F(CliTest, AnEmptyOrUnreadableTokensPathIsAnError) {
  const std::vector<std::string> cases = {"--tokens ''", "--tokens " + (dir_ / "missing").string(),
                                          "--tokens " + dir_.string()};
  for (const std::string& args : cases) {
    SCOPED_TRACE(args);
    auto r = run(db_ + " serve --listen 127.0.0.1:0 " + args, /*timeout_seconds=*/10);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("tokens"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("serving"), std::string::npos) << r.output;
  }
}

// A tokens file others can read gets a warning at start (the server still starts).
TEST_F(CliTest, ATokensFileReadableByOthersIsWarnedAbout) {
  const std::string tokens = write("tokens", "t0ken-admin admin\n");
  ASSERT_EQ(chmod(tokens.c_str(), 0644), 0);
  // Serves for a moment, then stops on SIGTERM: everything it said on the way.
  auto serve = [&] {
    return run(db_ + " serve --listen 127.0.0.1:0 --tokens " + tokens, /*timeout_seconds=*/3)
        .output;
  };
  const std::string loose = serve();
  EXPECT_NE(loose.find("serving"), std::string::npos) << loose;
  EXPECT_NE(loose.find("readable by"), std::string::npos) << loose;
  EXPECT_NE(loose.find("chmod 600"), std::string::npos) << loose;
  ASSERT_EQ(chmod(tokens.c_str(), 0600), 0);
  const std::string tight = serve();
  EXPECT_NE(tight.find("serving"), std::string::npos) << tight;
  EXPECT_EQ(tight.find("readable by"), std::string::npos) << tight;
}

// A leader lease too short to be renewed in time is refused before anything starts (2 s is the
// least), and so is one that is not a duration; either error names the option.
TEST_F(CliTest, ALeaderLeaseShorterThanTwoSecondsIsRefused) {
  for (const std::string lease : {"1s", "500ms", "0s", "-3s", "soon"}) {
    SCOPED_TRACE(lease);
    auto r = run(db_ + " serve --listen 127.0.0.1:0 --leader-lease " + lease, 10);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.exit_code, 124) << "it started serving: " << r.output;
    EXPECT_NE(r.output.find("--leader-lease"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("serving"), std::string::npos) << r.output;
  }
  const std::string ok = run(db_ + " serve --listen 127.0.0.1:0 --leader-lease 2s", 3).output;
  EXPECT_NE(ok.find("serving"), std::string::npos) << ok;
}

TEST_F(CliTest, ServeRefusesNonLoopbackWithoutTokens) {
  // With TLS taken care of (a proxy in front): the tokens rule alone refuses.
  auto r = run(db_ + " serve --listen 0.0.0.0:0 --behind-tls-proxy");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("token"), std::string::npos) << r.output;
}

TEST_F(CliTest, ServeStopsGracefullyOnSigterm) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string db = "sqlite:" + (dir_ / "t.db").string();
    execl(onceorder_bin().c_str(), onceorder_bin().c_str(), "--db", db.c_str(), "serve", "--listen",
          "127.0.0.1:0", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until it has migrated and bound (the schema exists), then ask it to stop.
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    up = std::filesystem::exists(dir_ / "t.db") &&
         std::system(("sqlite3 " + (dir_ / "t.db").string() +
                      " 'SELECT 1 FROM schema_migrations' >/dev/null 2>&1")
                         .c_str()) == 0;
  }
  ASSERT_TRUE(up);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
