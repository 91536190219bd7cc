// Every error code docs/API.md documents has a test that produces it: this test lists the
// codes in the contract and fails, naming them, when one appears in no other test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "onceorder/core/status.hpp"

namespace onceorder::testing {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ErrorCodes, EveryDocumentedCodeHasATest) {
  const fs::path root = ONCEORDER_SOURCE_DIR;
  const std::string api = read(root / "docs" / "API.md");
  ASSERT_FALSE(api.empty()) << "docs/API.md not found under " << root;
  std::set<std::string> quoted;
  const std::regex token("`([a-z]+(_[a-z]+)*)`");
  for (std::sregex_iterator it(api.begin(), api.end(), token), end; it != end; ++it)
    quoted.insert((*it)[1].str());

  // The test sources: suites under tests/, unit tests beside the code. Not this file, and
  // not the table that maps codes to HTTP statuses (it produces none of them).
  std::string tests;
  auto take = [&](const fs::path& dir, bool unit_only) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (!e.is_regular_file() || e.path().extension() != ".cpp") continue;
      if (unit_only && !name.ends_with("_test.cpp")) continue;
      if (name == "error_codes_test.cpp" || name == "problem_test.cpp") continue;
      tests += read(e.path());
    }
  };
  take(root / "tests", false);
  take(root / "src", true);

  int documented = 0;
  std::vector<std::string> untested;
  for (int i = 1; i <= static_cast<int>(Code::reference_violation); ++i) {
    const std::string name(code_name(static_cast<Code>(i)));
    if (!quoted.contains(name)) continue;
    ++documented;
    if (tests.find("Code::" + name) == std::string::npos &&
        tests.find('"' + name + '"') == std::string::npos)
      untested.push_back(name);
  }
  EXPECT_GE(documented, 15) << "the contract's codes were not found in docs/API.md";
  std::string list;
  for (const auto& n : untested) list += " " + n;
  EXPECT_TRUE(untested.empty()) << "documented codes no test produces:" << list;
}

}  // namespace
}  // namespace onceorder::testing
