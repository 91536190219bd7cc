// The command line as the binary defines it against what the docs say of it: every command's
// --help lists exactly its own options (none of another command's), `--version` names the
// release and the commit, and the option lists of README.md ("Configuration") and docs/API.md
// ("Command line") name every option of every command, and no option a command does not have.
// The binary's own table, read through CLI11's help, is the reference (ONCEORDER_BIN).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_db.hpp"

namespace onceorder::testing {
namespace {

struct CliDocsRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

CliDocsRun cli_docs_shell(const std::string& command) {
  CliDocsRun r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string cli_docs_read(const std::string& relative) {
  std::ifstream in(std::filesystem::path(ONCEORDER_SOURCE_DIR) / relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The options everything that opens the database takes, which the docs state once for all.
const std::set<std::string> kCliDocsCommon = {"db", "verbose", "help"};

struct CliCommand {
  std::set<std::string> options;  // long names, without "--"
  std::vector<std::string> subcommands;
  std::string help;
};

// `onceorder PATH --help`: its subcommands and long options.
CliCommand cli_docs_help(const std::string& path) {
  CliCommand c;
  const auto run = cli_docs_shell(onceorder_bin() + " " + path + " --help");
  EXPECT_EQ(run.exit_code, 0) << path << ": " << run.output;
  c.help = run.output;
  static const std::regex kOption(R"((?:^|[ ,])--([a-z][a-z0-9-]*))");
  std::istringstream in(run.output);
  std::string line, section;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
    } else if (section == "Subcommands:" && line.size() > 2 && line[2] != ' ') {
      c.subcommands.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (section == "Options:" && line.size() > 2 && line[2] == '-') {
      // The option's names only, not its description.
      const std::string names = line.substr(0, line.find("  ", 2));
      for (std::sregex_iterator it(names.begin(), names.end(), kOption), e; it != e; ++it)
        c.options.insert((*it)[1].str());
    }
  }
  return c;
}

// Every command without subcommands, by path ("schedule batch"), with its options.
std::map<std::string, CliCommand> cli_docs_leaves() {
  std::map<std::string, CliCommand> leaves;
  std::vector<std::string> queue = {""};
  while (!queue.empty()) {
    const std::string path = queue.back();
    queue.pop_back();
    CliCommand c = cli_docs_help(path);
    for (const auto& s : c.subcommands) queue.push_back(path.empty() ? s : path + " " + s);
    if (!path.empty() && c.subcommands.empty()) leaves.emplace(path, std::move(c));
  }
  return leaves;
}

// The first fenced block after `heading` in `text`.
std::string cli_docs_block(const std::string& text, const std::string& heading) {
  const auto at = text.find("\n" + heading + "\n");
  if (at == std::string::npos) return "";
  const auto open = text.find("\n```", at);
  const auto body = text.find('\n', open + 1);
  const auto close = text.find("\n```", body);
  if (open == std::string::npos || close == std::string::npos) return "";
  return text.substr(body + 1, close - body - 1);
}

// A block's entries: a line "onceorder WORDS…" starts the entry of the longest command path
// its words begin with ("" for "onceorder --OPTION"); indented lines continue it. Unknown
// commands are reported as "?LINE".
std::map<std::string, std::string> cli_docs_entries(
    const std::string& block, const std::map<std::string, CliCommand>& leaves) {
  std::map<std::string, std::string> entries;
  std::string current;
  std::istringstream in(block);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("onceorder ", 0) == 0) {
      std::istringstream words(line.substr(10));
      std::string word, path;
      current = "?" + line;
      if (line.rfind("onceorder --", 0) == 0) current = "";  // onceorder's own options
      while (words >> word) {
        path += (path.empty() ? "" : " ") + word;
        if (leaves.contains(path)) current = path;
      }
      entries[current] += line + "\n";
    } else if (!current.empty() && !line.empty() && line[0] == ' ') {
      entries[current] += line + "\n";
    }
  }
  return entries;
}

std::set<std::string> cli_docs_long_options(const std::string& text) {
  static const std::regex kOption(R"(--([a-z][a-z0-9-]*))");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), kOption), e; it != e; ++it)
    out.insert((*it)[1].str());
  return out;
}

void expect_block_matches_cli(const std::string& doc, const std::string& heading,
                              const std::map<std::string, CliCommand>& leaves) {
  const std::string block = cli_docs_block(cli_docs_read(doc), heading);
  ASSERT_FALSE(block.empty()) << doc << " has no fenced block under " << heading;
  const auto entries = cli_docs_entries(block, leaves);
  for (const auto& [path, entry] : entries)
    EXPECT_TRUE(path.empty() || path[0] != '?')
        << doc << " lists a command onceorder does not have:\n"
        << entry;
  for (const auto& [path, command] : leaves) {
    const auto it = entries.find(path);
    if (it == entries.end()) {
      ADD_FAILURE() << doc << " (" << heading << ") has no line for `onceorder " << path << "`";
      continue;
    }
    const std::set<std::string> written = cli_docs_long_options(it->second);
    for (const auto& o : command.options) {
      if (kCliDocsCommon.contains(o)) continue;
      EXPECT_TRUE(written.contains(o)) << doc << ": `onceorder " << path << "` lacks --" << o;
    }
    for (const auto& o : written)
      EXPECT_TRUE(command.options.contains(o))
          << doc << ": `onceorder " << path << "` has no option --" << o;
  }
  // The common options and --version are stated once for all.
  const std::set<std::string> all = cli_docs_long_options(block);
  for (const char* o : {"db", "verbose", "version"})
    EXPECT_TRUE(all.contains(o)) << doc << " (" << heading << ") never names --" << o;
}

TEST(CliDocsTest, EachCommandsHelpListsOnlyItsOwnOptions) {
  const auto leaves = cli_docs_leaves();
  ASSERT_GE(leaves.size(), 10u) << "the help texts were not read";
  // Every command that opens the database names --db and -v in its own help.
  for (const auto& [path, command] : leaves) {
    if (path == "token new") continue;  // opens no database
    EXPECT_TRUE(command.options.contains("db")) << path << " --help omits --db";
    EXPECT_TRUE(command.options.contains("verbose")) << path << " --help omits --verbose";
  }
  EXPECT_FALSE(leaves.at("token new").options.contains("db"));
  // The scheduling settings only where they act.
  const std::set<std::string> reap = {"db", "verbose", "help", "run-timeout"};
  EXPECT_EQ(leaves.at("schedule reap").options, reap);
  const std::set<std::string> batch = {"db", "verbose", "help", "lease", "max-attempts", "workers"};
  EXPECT_EQ(leaves.at("schedule batch").options, batch);
  const std::set<std::string> requeue = {"db", "verbose", "help", "max-attempts", "dry-run"};
  EXPECT_EQ(leaves.at("schedule requeue").options, requeue);
  // CLI11's internals never reach the user.
  for (const auto& [path, command] : leaves) {
    EXPECT_EQ(command.help.find("ENUM"), std::string::npos) << path << ":\n" << command.help;
    EXPECT_EQ(command.help.find("->"), std::string::npos) << path << ":\n" << command.help;
  }
  EXPECT_NE(leaves.at("migrate").help.find("full|new-rows-only"), std::string::npos)
      << leaves.at("migrate").help;
}

TEST(CliDocsTest, VersionNamesTheReleaseAndTheCommit) {
  const auto run = cli_docs_shell(onceorder_bin() + " --version");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(std::regex_match(
      run.output,
      std::regex(
          R"(onceorder [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,40}(-dirty)?|unknown)\)\n)")))
      << run.output;
  // After a subcommand too (the flag falls through to onceorder's own).
  EXPECT_EQ(cli_docs_shell(onceorder_bin() + " serve --version").output, run.output);
}

TEST(CliDocsTest, ReadmeConfigurationListsEveryOptionOfEveryCommand) {
  expect_block_matches_cli("README.md", "## Configuration", cli_docs_leaves());
}

TEST(CliDocsTest, ApiCommandLineListsEveryOptionOfEveryCommand) {
  expect_block_matches_cli("docs/API.md", "## Command line", cli_docs_leaves());
}

}  // namespace
}  // namespace onceorder::testing
