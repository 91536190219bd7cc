#include "history.hpp"

#include <chrono>
#include <map>
#include <stdexcept>

namespace onceorder::torture {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Outcome parse_outcome(const std::string& s) {
  if (s == "ok") return Outcome::ok;
  if (s == "fail") return Outcome::fail;
  return Outcome::unknown;
}

Received parse_received(const nlohmann::json& j) {
  Received r;
  r.endpoint = j.value("endpoint", "");
  r.event_id = j.value("event_id", std::int64_t{-1});
  r.event_key = j.value("event_key", "");
  r.idempotency_key = j.value("idempotency_key", "");
  r.attempt = j.value("attempt", "");
  r.signature = j.value("signature", "");
  r.sha = j.value("sha", "");
  r.body = j.value("body", "");
  r.verified = j.value("verified", "");
  r.did = j.value("did", "");
  r.acted = j.value("acted", false);
  return r;
}

FeedPage parse_page(const nlohmann::json& j) {
  FeedPage p{j.value("after", ""), j.value("next_after", ""), {}};
  for (const auto& e : j.value("events", nlohmann::json::array()))
    p.events.push_back(
        {e.at(0).get<std::int64_t>(), e.at(1).get<std::string>(), e.at(2).get<std::string>()});
  return p;
}

// The outbox's lines; false for any other phase.
bool load_outbox_line(const std::string& phase, const nlohmann::json& j, History& h) {
  if (phase == "receive") {
    h.received.push_back(parse_received(j));
  } else if (phase == "feed") {
    h.feed.push_back(parse_page(j));
  } else if (phase == "operator") {
    h.words.push_back({j.value("action", ""), j.value("endpoint", ""),
                       j.value("event_ids", std::vector<std::int64_t>{}),
                       j.value("delivered", false), j.value("status", 0)});
  } else if (phase == "consumer") {
    h.consumer.push_back(j);
  } else {
    return false;
  }
  return true;
}

}  // namespace

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::ok:
      return "ok";
    case Outcome::fail:
      return "fail";
    case Outcome::unknown:
      return "unknown";
  }
  return "unknown";
}

HistoryWriter::HistoryWriter(const std::string& path) : out_(path), start_ms_(now_ms()) {
  if (!out_) throw std::runtime_error("cannot write the history to " + path);
}

void HistoryWriter::write(const nlohmann::json& line) {
  std::lock_guard lock(mu_);
  nlohmann::json l = line;
  l["t"] = now_ms() - start_ms_;
  // Flushed per line: a history must survive the harness being killed.
  out_ << l.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n' << std::flush;
}

void HistoryWriter::invoke(const Op& op) {
  write({{"id", op.id},
         {"phase", "invoke"},
         {"type", op.type},
         {"request", op.request},
         {"final", op.final_replay}});
}

void HistoryWriter::complete(const Op& op) {
  nlohmann::json l = {
      {"id", op.id}, {"phase", outcome_name(op.outcome)}, {"type", op.type}, {"status", op.status}};
  if (!op.response.is_null()) l["response"] = op.response;
  if (!op.error.empty()) l["error"] = op.error;
  write(l);
}

void HistoryWriter::note(const nlohmann::json& event) {
  nlohmann::json l = event;
  l["phase"] = "nemesis";
  write(l);
}

void HistoryWriter::record(const nlohmann::json& line) { write(line); }

std::vector<nlohmann::json> read_history_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the history " + path);
  std::vector<nlohmann::json> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) lines.push_back(std::move(j));  // else a line cut short by a kill
  }
  return lines;
}

History history_from_lines(const std::vector<nlohmann::json>& lines) {
  History h;
  std::map<std::int64_t, size_t> index;
  for (const auto& j : lines) {
    const std::string phase = j.value("phase", "");
    if (phase == "nemesis") {
      h.events.push_back(j);
      continue;
    }
    if (load_outbox_line(phase, j, h)) continue;
    const std::int64_t id = j.value("id", std::int64_t{-1});
    if (phase == "invoke") {
      Op op;
      op.id = id;
      op.type = j.value("type", "");
      op.request = j.value("request", nlohmann::json());
      op.final_replay = j.value("final", false);
      index[id] = h.ops.size();
      h.ops.push_back(std::move(op));
      continue;
    }
    auto it = index.find(id);
    if (it == index.end()) continue;
    Op& op = h.ops[it->second];
    op.outcome = parse_outcome(phase);
    op.status = j.value("status", 0);
    op.response = j.value("response", nlohmann::json());
    op.error = j.value("error", "");
  }
  return h;
}

History load_history(const std::string& path) {
  return history_from_lines(read_history_lines(path));
}

}  // namespace onceorder::torture
