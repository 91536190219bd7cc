#include "http/order_json.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

namespace onceorder::http {
namespace {

// `s` as a JSON string, as json_response writes it. What the services hand back is printable
// ASCII almost always (numbers, statuses, timestamps) and is copied; anything else is written
// by nlohmann. Not append_json_string (onceorder/core/text.hpp): that one writes
// control characters as \u00XX where nlohmann writes \n, and keeps invalid UTF-8, which
// nlohmann replaces; the answer's bytes must stay those a replay of an older answer shows.
void append_answer_string(fmt::memory_buffer& out, std::string_view s) {
  bool plain = true;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    out.push_back('"');
    out.append(s);
    out.push_back('"');
    return;
  }
  const std::string escaped =
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out.append(std::string_view(escaped));
}

}  // namespace

std::string order_json_text(const Order& o) {
  fmt::memory_buffer out;  // on the stack for an order of a few lines
  const auto text = [&out](std::string_view piece) { out.append(piece); };
  const auto integer = [&out](std::int64_t v) {
    const fmt::format_int digits(v);
    out.append(std::string_view(digits.data(), digits.size()));
  };
  // Members in nlohmann's (std::map's) order: sorted by name.
  text(R"({"created_at":)");
  append_answer_string(out, o.created_at);
  text(R"(,"customer_id":)");
  integer(o.customer_id);
  text(R"(,"lines":[)");
  for (std::size_t i = 0; i < o.lines.size(); ++i) {
    const OrderLine& l = o.lines[i];
    text(i == 0 ? R"({"line_no":)" : R"(,{"line_no":)");
    integer(l.line_no);
    text(R"(,"quantity":)");
    integer(l.quantity);
    text(R"(,"sku_id":)");
    integer(l.sku_id);
    text(R"(,"unit_price_cents":)");
    integer(l.unit_price_cents);
    text("}");
  }
  text(R"(],"order_id":")");
  integer(o.order_id);
  text(R"(","order_no":)");
  append_answer_string(out, o.order_no);
  text(R"(,"principal":)");
  if (o.principal.empty()) {
    text("null");  // placed before principals were recorded
  } else {
    append_answer_string(out, o.principal);
  }
  text(R"(,"status":)");
  append_answer_string(out, o.status);
  text(R"(,"total_cents":)");
  integer(o.total_cents);
  text(R"(,"warehouse_id":)");
  integer(o.warehouse_id);
  text("}");
  return fmt::to_string(out);
}

}  // namespace onceorder::http
