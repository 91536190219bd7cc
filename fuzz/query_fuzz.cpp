// The query and path readers (src/http/request_input.*): arbitrary bytes as a request
// target's query string, read through QueryReader the way GET /v1/schedule/items and
// GET /v1/schedule/runs do, and as a path id (parse_id) and a number (parse_int).
//
// Properties: every value a reader returns is within its bounds and is text (valid UTF-8,
// no control character); a parameter with a bad value or unknown name makes finish()
// fail; parse_id accepts exactly the canonical decimal spelling of 1..2^63-1.
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "check.hpp"
#include "http/request_input.hpp"
#include "http/router.hpp"
#include "onceorder/core/limits.hpp"
#include "onceorder/core/schedule_status.hpp"
#include "onceorder/core/text.hpp"

using namespace onceorder;
using namespace onceorder::http;

namespace {

void check_string(QueryReader& q, const std::string& name, size_t max) {
  if (auto v = q.string(name, max)) {
    FUZZ_CHECK(!v->empty() && v->size() <= max);
    FUZZ_CHECK(!text_problem(*v));
  }
}

void check_integer(QueryReader& q, const std::string& name, std::int64_t min, std::int64_t max) {
  if (auto v = q.integer(name, min, max)) FUZZ_CHECK(*v >= min && *v <= max);
}

// Reference reading of a decimal number: digits only, in range.
std::optional<std::int64_t> reference_int(std::string_view s, std::int64_t min, std::int64_t max) {
  if (s.empty()) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) return std::nullopt;
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // As a number and as a path id.
  FUZZ_CHECK(parse_int(text, 0, kMaxId) == reference_int(text, 0, kMaxId));
  FUZZ_CHECK(parse_int(text, 5, 1000) == reference_int(text, 5, 1000));
  if (auto id = parse_id(text)) {
    FUZZ_CHECK(*id >= 1 && std::to_string(*id) == text);
  } else if (auto any = reference_int(text, 1, kMaxId)) {
    FUZZ_CHECK(std::to_string(*any) != text);  // refused only for a non-canonical spelling
  }

  // As a query string: list_items, then list_runs, on a fresh reader each.
  const std::string target = "/v1/schedule/items?" + std::string(text);
  auto parsed = parse_query(split_target(target).second);
  auto items = QueryReader::parse(target);
  FUZZ_CHECK(items.ok() <= parsed.ok());  // the reader refuses what the parser refuses
  if (!items.ok()) {
    FUZZ_CHECK(items.status().code() == Code::invalid_request);
    return 0;
  }
  for (const auto& [name, value] : *parsed) FUZZ_CHECK(!text_problem(name));
  const bool bad_value = [&] {
    for (const auto& [name, value] : *parsed)
      if (text_problem(value)) return true;
    return false;
  }();

  QueryReader q = std::move(*items);
  if (auto status = q.string("status", 16)) {
    if (!parse_item_status(*status)) q.add_error("status", "must be ...");
  }
  check_string(q, "site_code", 64);
  check_string(q, "order_no", 64);
  check_string(q, "lot_no", 64);
  check_integer(q, "run_id", 1, kMaxId);
  check_integer(q, "after", 0, kMaxId);
  const int limit = q.limit();
  FUZZ_CHECK(limit >= 1 && limit <= 1000);
  const Status st = q.finish();
  if (bad_value) FUZZ_CHECK(!st.ok());
  if (st.ok()) {
    // Every parameter was known and well-formed.
    static const std::string_view kKnown[] = {"status", "site_code", "order_no", "lot_no",
                                              "run_id", "after",     "limit"};
    for (const auto& [name, value] : *parsed) {
      FUZZ_CHECK(std::find(std::begin(kKnown), std::end(kKnown), name) != std::end(kKnown));
    }
  } else {
    FUZZ_CHECK(st.code() == Code::invalid_request && !st.fields().empty());
  }

  auto runs = QueryReader::parse("/v1/schedule/runs?" + std::string(text));
  FUZZ_CHECK(runs.ok());
  const bool wait = runs->boolean("wait", true);
  if (runs->finish().ok()) {
    for (const auto& [name, value] : *parsed) FUZZ_CHECK(name == "wait");
    const bool sent_false = !parsed->empty() && (*parsed)[0].second == "false";
    FUZZ_CHECK(wait == !sent_false);
  }
  return 0;
}
