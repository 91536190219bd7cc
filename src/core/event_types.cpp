#include "onceorder/core/event_types.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "onceorder/core/text.hpp"

namespace onceorder {
namespace {

// A canonical non-negative decimal (no sign, no leading zero but "0"), fitting in int64.
std::optional<std::int64_t> parse_canonical(std::string_view s) {
  if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

bool is_event_type(std::string_view type) {
  return std::find(kEventTypes.begin(), kEventTypes.end(), type) != kEventTypes.end();
}

std::string cursor_text(const FeedPosition& p) { return fmt::format("{}:{}", p.tx, p.event_id); }

Result<FeedPosition> parse_cursor(std::string_view text) {
  if (text == "0") return FeedPosition{};
  const auto colon = text.find(':');
  const auto bad = [&] {
    return Status(Code::invalid_request,
                  "a cursor is \"0\" or a next_after the feed answered (\"<tx>:<event_id>\")");
  };
  if (colon == std::string_view::npos) return bad();
  const auto tx = parse_canonical(text.substr(0, colon));
  const auto id = parse_canonical(text.substr(colon + 1));
  if (!tx || !id) return bad();
  return FeedPosition{*tx, *id};
}

std::string event_json(const Event& e) {
  std::string out;
  out.reserve(64 + e.type.size() + e.key.size() + e.occurred_at.size() + e.data.size());
  out += "{\"id\":";
  out += std::to_string(e.id);
  out += ",\"type\":";
  append_json_string(out, e.type);
  out += ",\"key\":";
  append_json_string(out, e.key);
  out += ",\"occurred_at\":";
  append_json_string(out, e.occurred_at);
  out += ",\"data\":";
  out += e.data;
  out += '}';
  return out;
}

Result<std::vector<std::string>> parse_event_types(std::string_view csv) {
  std::vector<std::string> out;
  while (!csv.empty()) {
    const auto comma = csv.find(',');
    const auto item = csv.substr(0, comma);
    if (!is_event_type(item)) {
      return Status(Code::invalid_request,
                    fmt::format("unknown event type \"{}\" (known: {})", item.substr(0, 64),
                                fmt::join(kEventTypes, ", ")));
    }
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    csv.remove_prefix(comma + 1);
    if (csv.empty()) return Status(Code::invalid_request, "an event type list ends with a comma");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string join_event_types(const std::vector<std::string>& types) {
  return fmt::format("{}", fmt::join(types, ","));
}

std::string_view to_string(DeliveryMode m) {
  return m == DeliveryMode::at_most_once ? "at_most_once" : "at_least_once";
}

std::optional<DeliveryMode> parse_delivery_mode(std::string_view s) {
  if (s == "at_least_once") return DeliveryMode::at_least_once;
  if (s == "at_most_once") return DeliveryMode::at_most_once;
  return std::nullopt;
}

namespace {
constexpr std::array<std::pair<DeliveryStatus, std::string_view>, 5> kStatusNames = {{
    {DeliveryStatus::pending, "pending"},
    {DeliveryStatus::sending, "sending"},
    {DeliveryStatus::delivered, "delivered"},
    {DeliveryStatus::dead, "dead"},
    {DeliveryStatus::in_doubt, "in_doubt"},
}};
}  // namespace

std::string_view to_string(DeliveryStatus s) {
  for (const auto& [status, name] : kStatusNames) {
    if (status == s) return name;
  }
  return "pending";
}

std::optional<DeliveryStatus> parse_delivery_status(std::string_view s) {
  for (const auto& [status, name] : kStatusNames) {
    if (name == s) return status;
  }
  return std::nullopt;
}

std::string_view to_string(SendResult r) {
  switch (r) {
    case SendResult::delivered:
      return "delivered";
    case SendResult::refused:
      return "refused";
    case SendResult::unknown:
      return "unknown";
  }
  return "unknown";
}

std::chrono::milliseconds retry_delay(int backoff_seconds, int failures, double jitter) {
  const int doublings = std::clamp(failures - 1, 0, 30);
  const double base = static_cast<double>(backoff_seconds) * std::ldexp(1.0, doublings);
  const double spread = base * (0.5 + std::clamp(jitter, 0.0, 1.0));
  const double capped = std::min(spread, static_cast<double>(EventLimits::kMaxBackoffCapSeconds));
  return std::chrono::milliseconds(static_cast<std::int64_t>(capped * 1000.0));
}

DeliveryOutcome decide_outcome(const DeliveryClaim& claim, SendResult result,
                               std::optional<int> http_status, std::string error, double jitter) {
  DeliveryOutcome o{
      claim.endpoint, claim.event.id, claim.owner, claim.attempt, DeliveryStatus::delivered, 0,
      std::nullopt,   http_status};
  if (result == SendResult::delivered) return o;
  o.error = std::move(error);
  // at_most_once: an answer that may have been received is never sent again on its own.
  if (result == SendResult::unknown && claim.mode == DeliveryMode::at_most_once) {
    o.status = DeliveryStatus::in_doubt;
    return o;
  }
  if (claim.attempts_left() <= 0) {
    o.status = DeliveryStatus::dead;
    return o;
  }
  o.status = DeliveryStatus::pending;
  o.retry_after_ms =
      retry_delay(claim.backoff_seconds, claim.attempt - claim.budget_from, jitter).count();
  return o;
}

}  // namespace onceorder
