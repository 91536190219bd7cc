// The legacy CSV reader (src/core/csv.*) and the per-line field checks the legacy imports
// apply (import-items, resolve-items, import-legacy): those imports need a database, so this
// target runs parse_csv and then each line's checks the way the importers do.
//
// Properties: records have increasing line numbers and no line breaks in fields; writing
// the records back as CSV (every field quoted) reads back to the same fields; the field
// checks are idempotent where they normalize (timestamps, statuses, schemes).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "onceorder/core/csv.hpp"
#include "onceorder/core/number_format.hpp"
#include "onceorder/core/schedule_status.hpp"
#include "onceorder/core/text.hpp"
#include "onceorder/core/timestamp.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"

using namespace onceorder;

namespace {

std::string write_csv(const std::vector<CsvLine>& records) {
  std::string out;
  for (const auto& r : records) {
    for (size_t i = 0; i < r.fields.size(); ++i) {
      if (i > 0) out += ',';
      out += '"';
      for (char c : r.fields[i]) {
        if (c == '"') out += '"';
        out += c;
      }
      out += '"';
    }
    out += '\n';
  }
  return out;
}

// import-items' row checks (site_code,order_no,lot_no,status,created_at[,run_id]).
void check_item_row(const std::vector<std::string>& f) {
  const OrderKey key{f[0], f[1], f[2]};
  if (validate_order_key(key, "").ok()) {
    FUZZ_CHECK(!key.site_code.empty() && key.site_code.size() <= 32);
    FUZZ_CHECK(is_valid_scope_name(key.site_code));
    for (const std::string* part : {&key.order_no, &key.lot_no}) {
      FUZZ_CHECK(!part->empty());
      FUZZ_CHECK(!text_problem(*part));  // printable ASCII is text
      FUZZ_CHECK(part->find(' ') == std::string::npos);
    }
  } else {
    const Status st = validate_order_key(key, "p.");
    FUZZ_CHECK(!st.fields().empty());
    for (const auto& e : st.fields()) FUZZ_CHECK(e.field.starts_with("p."));
  }
  if (auto status = parse_item_status(f[3])) {
    FUZZ_CHECK(parse_item_status(to_string(*status)) == status);
    FUZZ_CHECK(f[3].size() == to_string(*status).size());
  }
  if (auto created = normalize_iso8601(f[4]); created.ok()) {
    // "YYYY-MM-DDTHH:MM:SS.mmmZ", and normalizing it again changes nothing.
    FUZZ_CHECK(created->size() == 24 && created->back() == 'Z' && (*created)[10] == 'T');
    const auto again = normalize_iso8601(*created);
    FUZZ_CHECK(again.ok() && *again == *created);
  }
}

// import-legacy's row checks (number[,scheme][,title]).
void check_number_row(const std::vector<std::string>& f) {
  for (LegacyScheme s : {LegacyScheme::dec3, LegacyScheme::hex3, LegacyScheme::dec4}) {
    if (auto v = parse_legacy_number(f[0], s); v.ok()) FUZZ_CHECK(*v >= 1 && *v <= 9999);
  }
  if (f.size() > 1) {
    if (auto s = parse_scheme(f[1]); s.ok()) FUZZ_CHECK(scheme_name(*s) == f[1]);
  }
  const std::string& title = f.back();
  const auto problem = title_problem(title);
  const auto len = utf8_length(title);
  FUZZ_CHECK(problem.has_value() == (!len || *len == 0 || *len > 200 || has_control_chars(title)));
  FUZZ_CHECK(validate_issue_request({"S-1", title, std::nullopt}).ok() == !problem);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = parse_csv(text);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == Code::invalid_request);
    FUZZ_CHECK(text.find('"') != std::string_view::npos);  // only an open quote fails
    return 0;
  }
  int last = 0;
  for (const auto& r : *parsed) {
    FUZZ_CHECK(r.line_no > last);
    last = r.line_no;
    FUZZ_CHECK(!r.fields.empty());
    for (const auto& f : r.fields) {
      FUZZ_CHECK(f.find('\n') == std::string::npos);
      FUZZ_CHECK(f.size() <= size);
    }
  }
  const auto reread = parse_csv(write_csv(*parsed));
  FUZZ_CHECK(reread.ok() && reread->size() == parsed->size());
  for (size_t i = 0; i < parsed->size(); ++i) {
    FUZZ_CHECK((*reread)[i].fields == (*parsed)[i].fields);
    FUZZ_CHECK((*reread)[i].line_no == static_cast<int>(i) + 1);
  }

  for (size_t i = 1; i < parsed->size(); ++i) {
    const auto& f = (*parsed)[i].fields;
    if (f.size() == 5 || f.size() == 6) check_item_row(f);
    if (f.size() <= 3) check_number_row(f);
  }
  return 0;
}
