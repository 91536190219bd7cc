#include "cli/demo.hpp"

#include <fmt/format.h>

#include "onceorder/numbering.hpp"

namespace onceorder::cli {

Status load_demo(store::Database& db, std::ostream& out) {
  Numbering numbering(db);
  auto deadline = [] { return store::Clock::now() + std::chrono::seconds(30); };

  // A project whose legacy system wrote three-digit decimal numbers up to 295.
  if (!numbering.scope("TEST-001", deadline()).ok()) {
    std::string csv = "number,title\n";
    for (int v = 290; v <= 295; ++v) csv += fmt::format("{},legacy document {}\n", v, v);
    auto r = numbering.import_legacy("TEST-001", LegacyScheme::dec3, csv, deadline());
    if (!r.ok()) return r.status();
  }
  for (int i = 1; i <= 3; ++i) {
    auto r = numbering.issue(
        {"TEST-001", fmt::format("demo document {}", i), fmt::format("demo-{}", i)}, deadline());
    if (!r.ok()) return r.status();
    out << fmt::format("TEST-001 document {} {}\n", r->document.number,
                       r->replayed ? "(already there)" : "issued");
  }
  // A hexadecimal scope, as the old system's hex3 numbers were.
  auto hex = numbering.configure("HEX-A", ScopeFormat{3, 16, 0xFFF}, deadline());
  if (!hex.ok()) return hex.status();
  auto r = numbering.issue({"HEX-A", "first hex document", std::string("demo-hex-1")}, deadline());
  if (!r.ok()) return r.status();
  out << fmt::format("HEX-A document {}\n", r->document.number);
  return Status::Ok();
}

}  // namespace onceorder::cli
