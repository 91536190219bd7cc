// No open admin, as the binary does it: `onceorder serve` without --tokens makes its tokens
// file at first start (private, one admin entry in sha256: form, the token printed once on
// stdout and nowhere in the log) and reuses it later; bad files are start errors that never
// print a token; `onceorder token new` prints a token and a line that serve then admits.
#include <sys/stat.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "e2e/http_fixture.hpp"
#include "e2e/serve_process.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string whole_file(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// stdout and stderr of `onceorder ARGS` and its exit code.
std::pair<std::string, int> onceorder_says(const std::string& args) {
  const char* bin = std::getenv("ONCEORDER_BIN");
  FILE* p = popen(((bin ? bin : "./onceorder") + (" " + args) + " 2>&1").c_str(), "r");
  if (!p) return {"", -1};
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

class ServeTokensTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<TestDb>(GetParam());
    dir_ = fs::temp_directory_path() / ("onceorder-tokens-" + random_suffix());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // SQLite: a database in the test's directory, whose tokens file goes beside it;
  // PostgreSQL: the test's database, with --state-dir the test's directory.
  std::string url() const {
    return GetParam() == Engine::sqlite ? "sqlite:" + (dir_ / "t.db").string() : scratch_->url();
  }
  std::vector<std::string> args() const {
    if (GetParam() == Engine::sqlite) return {};
    return {"--state-dir", dir_.string()};
  }
  fs::path tokens_path() const {
    return GetParam() == Engine::sqlite ? dir_ / "t.db.tokens" : dir_ / "onceorder.tokens";
  }

  std::unique_ptr<TestDb> scratch_;
  fs::path dir_;
};

TEST_P(ServeTokensTest, MakesItsTokensFileAtFirstStartAndReusesIt) {
  std::string token;
  {
    ServeProcess serve(url(), args(), 0, {}, {}, ServeTokens::own);
    const std::uint16_t port = serve.port();
    ASSERT_NE(port, 0) << serve.output();
    // The console's address comes once the server listens.
    for (int i = 0; i < 250 && serve.output().find("#token=") == std::string::npos; ++i) {
      std::this_thread::sleep_for(20ms);
    }
    const std::string out = serve.output();
    std::smatch m;
    ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(admin token: (\S+)\n)"))) << out;
    token = m[1].str();
    EXPECT_GE(token.size(), 43u);
    // Printed twice on stdout (the token, the console's address), in no log line.
    EXPECT_NE(out.find(fmt::format("console: http://127.0.0.1:{}/#token={}\n", port, token)),
              std::string::npos)
        << out;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("level=") != std::string::npos) {
        EXPECT_EQ(line.find(token), std::string::npos) << line;
      }
    }
    EXPECT_NE(out.find(tokens_path().string()), std::string::npos) << out;

    struct stat st {};
    ASSERT_EQ(::stat(tokens_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    const std::string text = whole_file(tokens_path());
    EXPECT_EQ(text.find(token), std::string::npos) << text;
    EXPECT_TRUE(std::regex_search(text, std::regex("(^|\n)sha256:[0-9a-f]{64} admin admin\n$")))
        << text;

    HttpClient c(port, 5s);
    c.set_token(std::nullopt);
    EXPECT_EQ(c.get("/v1/invariants").status, 401);
    EXPECT_EQ(c.get("/v1/invariants", bearer(kTestAdminToken)).status, 401);
    EXPECT_EQ(c.get("/v1/invariants", bearer(token)).status, 200);
    serve.signal(SIGTERM);
    ASSERT_EQ(serve.wait_exit(10s), 0) << serve.output();
  }
  const std::string before = whole_file(tokens_path());
  ServeProcess again(url(), args(), 0, {}, {}, ServeTokens::own);
  const std::uint16_t port = again.port();
  ASSERT_NE(port, 0) << again.output();
  EXPECT_EQ(again.output().find("admin token:"), std::string::npos) << again.output();
  EXPECT_EQ(again.output().find("#token="), std::string::npos) << again.output();
  EXPECT_EQ(whole_file(tokens_path()), before);
  HttpClient c(port, 5s);
  EXPECT_EQ(c.get("/v1/invariants", bearer(token)).status, 200);
}

// A start refused for its tokens file: exit 2, a message naming the line, no token in it.
TEST_P(ServeTokensTest, BadTokensFilesAreStartErrorsThatNeverPrintTheToken) {
  struct Case {
    std::string text;
    std::string secret;
    std::string says;
  };
  const std::string long_secret = "s3cret-long-enough-to-be-a-real-token-42";
  for (const Case& c : std::vector<Case>{
           {"# ours\n\ns3cret-short admin alice\n", "s3cret", "line 3"},
           {"admin " + long_secret + "\n", "s3cret", "starts with a role"},
           {long_secret + " admin\n" + "admin s3cret\n", "s3cret", "line 2"},
           {long_secret + " superuser\n", "s3cret", "line 1"},
       }) {
    SCOPED_TRACE(c.text);
    const fs::path file = dir_ / "tokens";
    std::ofstream(file) << c.text;
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    auto extra = args();
    extra.insert(extra.end(), {"--tokens", file.string()});
    ServeProcess serve(url(), extra, 0, {}, {}, ServeTokens::own);
    ASSERT_EQ(serve.wait_exit(10s), 2) << serve.output();
    EXPECT_NE(serve.output().find(c.says), std::string::npos) << serve.output();
    EXPECT_EQ(serve.output().find(c.secret), std::string::npos) << serve.output();
  }
}

// `token new` prints a token and its line; the line, added to a file, admits the token in the
// role named, and holds nothing of the token itself.
TEST_P(ServeTokensTest, TokenNewPrintsALineServeAdmits) {
  const auto [out, code] = onceorder_says("token new viewer watcher");
  ASSERT_EQ(code, 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      out, m, std::regex("token: (\\S{32,})\nline: (sha256:[0-9a-f]{64} viewer watcher)\n")))
      << out;
  const std::string token = m[1].str();
  const std::string line = m[2].str();
  EXPECT_EQ(line.find(token), std::string::npos);
  const fs::path file = dir_ / "tokens";
  std::ofstream(file) << line << "\n";
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  auto extra = args();
  extra.insert(extra.end(), {"--tokens", file.string()});
  ServeProcess serve(url(), extra);
  const std::uint16_t port = serve.port();
  ASSERT_NE(port, 0) << serve.output();
  HttpClient c(port, 5s);
  c.set_token(token);
  EXPECT_EQ(c.get("/v1/invariants").status, 200);
  EXPECT_EQ(c.post("/v1/maintenance/reap", "").status, 403);  // a viewer only reads
  for (const std::string bad : {"root", "'admin x'", "admin 'a b'", "admin 'al\"ice'"}) {
    EXPECT_EQ(onceorder_says("token new " + bad).second, 2) << bad;
  }
  EXPECT_NE(onceorder_says("token new customer:7").first.find("customer:7\n"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Engines, ServeTokensTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
