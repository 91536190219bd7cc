// The dashboard and the OpenAPI document come from the binary itself: a copy of `onceorder`
// alone in an empty directory, run from there, serves them byte for byte as they are in the
// source tree, with their content types, and nothing else.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "e2e/http_fixture.hpp"
#include "e2e/serve_process.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(ONCEORDER_SOURCE_DIR) + "/" + relative, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(EmbeddedFilesProcess, ABinaryAloneInAnEmptyDirectoryServesItsDashboard) {
  const fs::path dir = fs::temp_directory_path() / ("onceorder-alone-" + random_suffix());
  ASSERT_TRUE(fs::create_directory(dir));
  const fs::path binary = dir / "onceorder";
  fs::copy_file(onceorder_bin(), binary);
  {
    ServeProcess serve("sqlite:" + (dir / "alone.db").string(), {}, 0, binary.string(),
                       dir.string());
    const std::uint16_t port = serve.port();
    ASSERT_NE(port, 0) << serve.output();
    HttpClient c(port, 5s);
    const std::pair<std::string, std::string> files[] = {
        {"/", "web/index.html"},
        {"/index.html", "web/index.html"},
        {"/app.js", "web/app.js"},
        {"/style.css", "web/style.css"},
        {"/openapi.json", "docs/openapi.json"},
    };
    const std::map<std::string, std::string> types = {
        {"web/index.html", "text/html; charset=utf-8"},
        {"web/app.js", "text/javascript; charset=utf-8"},
        {"web/style.css", "text/css; charset=utf-8"},
        {"docs/openapi.json", "application/json"},
    };
    for (const auto& [path, source] : files) {
      const HttpResponse r = c.get(path);
      EXPECT_EQ(r.status, 200) << path;
      EXPECT_EQ(r.header("content-type"), types.at(source)) << path;
      EXPECT_EQ(r.body, source_file(source)) << path;
      EXPECT_EQ(r.header("cache-control"), "no-cache") << path;
      EXPECT_EQ(r.header("etag").size(), 34u) << path;
      EXPECT_NE(r.header("content-security-policy").find("default-src 'self'"), std::string::npos)
          << path;
    }
    EXPECT_EQ(c.get("/missing.js").status, 404);
    EXPECT_EQ(c.get("/CMakeLists.txt").status, 404);  // a file of the source tree
    // Nothing was written beside the binary but its database.
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      EXPECT_TRUE(name == "onceorder" || name.starts_with("alone.db")) << name;
    }
    serve.signal(SIGTERM);
    EXPECT_EQ(serve.wait_exit(10s), std::optional<int>(0)) << serve.output();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onceorder::testing
