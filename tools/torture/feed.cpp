#include "feed.hpp"

#include <map>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "e2e/http_client.hpp"

namespace onceorder::torture {
namespace {

using FeedJson = nlohmann::json;
using testing::HttpClient;

constexpr const char* kConsumerPath = "/v1/consumers/torture";

std::int64_t integer_of(const std::string& s) { return s.empty() ? 0 : std::stoll(s); }

// Every delivery of `endpoint` in `status` (one page of up to 1,000 a call is enough: the
// operator comes back every half second).
std::vector<std::int64_t> deliveries_in(HttpClient& c, const std::string& endpoint,
                                        const char* status) {
  std::vector<std::int64_t> ids;
  const auto res =
      c.get(fmt::format("/v1/endpoints/{}/deliveries?status={}&limit=1000", endpoint, status));
  if (res.status != 200) return ids;
  for (const auto& d : FeedJson::parse(res.body).value("deliveries", FeedJson::array()))
    ids.push_back(d.value("event_id", std::int64_t{0}));
  return ids;
}

// The operator's word on each in_doubt delivery: what the receiver's own record says.
void resolve_in_doubt(HttpClient& c, const Receiver& r, HistoryWriter& history) {
  for (std::int64_t id : deliveries_in(c, r.options().name, "in_doubt")) {
    const bool delivered = r.acted_on(id);
    const auto res = c.post(fmt::format("/v1/endpoints/{}/resolve", r.options().name),
                            FeedJson{{"event_id", id}, {"delivered", delivered}}.dump());
    history.record({{"phase", "operator"},
                    {"action", "resolve"},
                    {"endpoint", r.options().name},
                    {"event_ids", {id}},
                    {"delivered", delivered},
                    {"status", res.status}});
  }
}

void redeliver_dead(HttpClient& c, const Receiver& r, HistoryWriter& history) {
  const auto ids = deliveries_in(c, r.options().name, "dead");
  if (ids.empty()) return;
  const auto res = c.post(fmt::format("/v1/endpoints/{}/redeliver", r.options().name),
                          FeedJson{{"event_ids", ids}}.dump());
  history.record({{"phase", "operator"},
                  {"action", "redeliver"},
                  {"endpoint", r.options().name},
                  {"event_ids", ids},
                  {"status", res.status}});
}

// What is left to settle, "" when nothing; `events` is the number of events now.
std::string outbox_left(const std::vector<Receiver*>& receivers, const FeedConsumer* feed,
                        const Database& db, std::int64_t& events) {
  events = db.number("SELECT count(*) FROM events");
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> made;  // all, undelivered
  for (const auto& row : db.rows("SELECT endpoint, count(*), sum(CASE WHEN status <> "
                                 "'delivered' THEN 1 ELSE 0 END) FROM deliveries GROUP BY "
                                 "endpoint"))
    made[row[0]] = {integer_of(row[1]), integer_of(row[2])};
  std::string left;
  for (const Receiver* r : receivers) {
    if (r->options().mode == "poller") continue;
    const auto [all, undelivered] = made[r->options().name];
    if (all != events || undelivered != 0)
      left += fmt::format("{}: deliveries of {} of {} events, {} not delivered; ",
                          r->options().name, all, events, undelivered);
  }
  if (feed && feed->seen() != events)
    left += fmt::format("feed: {} of {} events seen; ", feed->seen(), events);
  return left;
}

}  // namespace

FeedConsumer::FeedConsumer(Targets targets, HistoryWriter& history, std::uint64_t seed)
    : targets_(std::move(targets)), history_(history), seed_(seed) {}

FeedConsumer::~FeedConsumer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void FeedConsumer::start() {
  thread_ = std::thread([this] { loop(); });
}

void FeedConsumer::loop() {
  std::mt19937_64 rng(seed_ * 31 + 7);
  std::vector<std::unique_ptr<HttpClient>> clients;
  for (auto port : targets_.ports)
    clients.push_back(std::make_unique<HttpClient>(port, std::chrono::seconds(5)));
  auto last_save = std::chrono::steady_clock::now();
  size_t target = 0;
  while (!stop_) {
    try {
      const auto res = clients[target]->get("/v1/events?after=" + after_ + "&limit=1000&wait=1");
      if (res.status != 200) throw std::runtime_error("HTTP " + std::to_string(res.status));
      const FeedJson page = FeedJson::parse(res.body);
      FeedJson events = FeedJson::array();
      for (const auto& e : page.at("events"))
        events.push_back({e.at("id"), e.at("type"), e.at("key")});
      const std::string next = page.at("next_after").get<std::string>();
      history_.record({{"phase", "feed"},
                       {"after", after_},
                       {"next_after", next},
                       {"events", events},
                       {"target", target}});
      after_ = next;
      seen_ += static_cast<std::int64_t>(events.size());
    } catch (const std::exception&) {
      // A server killed, paused or between primaries: go on from the last position, on a
      // new connection to the other server.
      clients[target] =
          std::make_unique<HttpClient>(targets_.ports[target], std::chrono::seconds(5));
      target = (target + 1) % clients.size();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (std::chrono::steady_clock::now() - last_save >= std::chrono::seconds(2)) {
      save(target);
      last_save = std::chrono::steady_clock::now();
    }
    target = std::uniform_int_distribution<size_t>(0, clients.size() - 1)(rng);
  }
}

int FeedConsumer::save(std::size_t target) {
  int status = 0;
  try {
    HttpClient c(targets_.ports[target % targets_.ports.size()], std::chrono::seconds(5));
    status = c.put(kConsumerPath, FeedJson{{"after", after_}}.dump()).status;
  } catch (const std::exception&) {
    status = 0;  // no answer: the position may or may not be saved
  }
  history_.record(
      {{"phase", "consumer"}, {"action", "put"}, {"after", after_}, {"status", status}});
  return status;
}

void FeedConsumer::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  for (int attempt = 0; attempt < 10 && save(static_cast<size_t>(attempt)) / 100 != 2; ++attempt)
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Read back: the checker compares it with the last save that was answered 2xx.
  FeedJson line = {{"phase", "consumer"}, {"action", "get"}, {"status", 0}};
  for (size_t t = 0; t < targets_.ports.size() && line["status"] != 200; ++t) {
    try {
      HttpClient c(targets_.ports[t], std::chrono::seconds(5));
      const auto res = c.get(kConsumerPath);
      line["status"] = res.status;
      if (res.status == 200) line["after"] = FeedJson::parse(res.body).value("after", "");
    } catch (const std::exception&) {
      // No answer here: the other server, or status 0, which the checker reports.
    }
  }
  history_.record(line);
}

bool set_up_endpoints(const Targets& targets, const std::vector<Receiver*>& receivers,
                      HistoryWriter& history) {
  for (const Receiver* r : receivers) {
    if (r->options().mode == "poller") continue;
    const FeedJson body = {
        {"url", fmt::format("http://{}:{}/events", r->options().address, r->port())},
        {"secret", r->options().secret},
        {"types", FeedJson::array()},
        {"delivery", r->options().mode},
        {"max_attempts", 50},
        {"backoff_seconds", 1},
        {"after", "0"}};
    int status = 0;
    for (int attempt = 0; attempt < 20 && status != 201 && status != 200; ++attempt) {
      try {
        HttpClient c(targets.ports[0], std::chrono::seconds(10));
        status = c.put("/v1/endpoints/" + r->options().name, body.dump()).status;
      } catch (const std::exception&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
    history.record({{"phase", "operator"},
                    {"action", "endpoint"},
                    {"endpoint", r->options().name},
                    {"status", status}});
    if (status != 201 && status != 200) return false;
  }
  return true;
}

std::string settle_outbox(const Targets& targets, const std::vector<Receiver*>& receivers,
                          const FeedConsumer* feed, const Database& db, HistoryWriter& history,
                          std::chrono::seconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  std::int64_t before = -1, events = 0;
  int round = 0;
  std::string left;
  for (;;) {
    left = outbox_left(receivers, feed, db, events);
    // Settled twice in a row with no new event between: nothing is still on its way.
    if (left.empty() && events == before) break;
    before = left.empty() ? events : -1;
    if (std::chrono::steady_clock::now() >= until) break;
    try {
      // Either server: one that did not come back leaves the other to answer.
      HttpClient c(targets.ports[static_cast<size_t>(++round) % targets.ports.size()],
                   std::chrono::seconds(10));
      for (const Receiver* r : receivers) {
        if (r->options().mode == "poller") continue;
        if (r->options().mode == "at_most_once") resolve_in_doubt(c, *r, history);
        redeliver_dead(c, *r, history);
      }
    } catch (const std::exception&) {
      // Healed servers answer; a broken connection is tried again in half a second.
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  history.record({{"phase", "operator"}, {"action", "left"}, {"what", left}});
  return left;
}

}  // namespace onceorder::torture
