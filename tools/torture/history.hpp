// The torture harness's history: every operation a client tried, as JSON lines.
//
// Each operation is written twice: an `invoke` line before its request is sent and one line
// with its outcome once it is known:
//   ok       a definite answer (the server decided: 2xx, or a stored decision such as an
//            order's 409 out_of_stock);
//   fail     a definite "nothing happened" (the connection was refused before anything was
//            sent, 503 busy, or a 4xx refusal that changes nothing);
//   unknown  the request may or may not have taken effect (the connection broke after the
//            request was written, a timeout, 500, 503 unavailable).
// The checker (checker.hpp) reads the history back with the database's final state.
//
// The outbox's side has lines of its own: `receive` (a request one of the harness's receivers
// read, and what it did with it), `feed` (a page the feed consumer got), `consumer` (its saved
// positions) and `operator` (the harness's words on deliveries after healing).
//
// Thread-safety: HistoryWriter may be shared by every client thread.
#pragma once

#include <cstdint>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace onceorder::torture {

enum class Outcome { ok, fail, unknown };
const char* outcome_name(Outcome o);

// One operation with its outcome (the invoke and the completion lines merged).
struct Op {
  std::int64_t id = 0;
  std::string type;        // order, cancel, document, adjust, source_orders, run, reap
  nlohmann::json request;  // what was sent (key, customer, body, path…)
  Outcome outcome = Outcome::unknown;
  int status = 0;             // HTTP status, 0 when none came
  nlohmann::json response;    // the parsed body (null when none or not JSON)
  std::string error;          // why there was no answer
  bool final_replay = false;  // sent by the harness after healing, not by the workload
};

class HistoryWriter {
 public:
  explicit HistoryWriter(const std::string& path);
  void invoke(const Op& op);
  void complete(const Op& op);
  void note(const nlohmann::json& event);   // nemesis events, for the reader's timeline
  void record(const nlohmann::json& line);  // an outbox line; `line` holds its phase

 private:
  void write(const nlohmann::json& line);
  std::mutex mu_;
  std::ofstream out_;
  std::int64_t start_ms_;
};

// One complete request a receiver read (receiver.hpp).
struct Received {
  std::string endpoint;       // the receiver's name: alo, amo, poller
  std::int64_t event_id = 0;  // the body's `id` (-1 when the body was not an event)
  std::string event_key;      // the body's `key`
  std::string idempotency_key, attempt, signature;
  std::string sha;       // SHA-256 of the raw body, hex
  std::string body;      // the raw body: on the first copy of each body only
  std::string verified;  // ok, malformed, stale, mismatch, unsigned (a receiver with no secret)
  std::string did;       // ok, fail (500), stall, drop, refused (401)
  bool acted = false;    // answered 2xx, or read it whole and then stalled or dropped
};

// One page the feed consumer read.
struct FeedPage {
  std::string after, next_after;
  struct Event {
    std::int64_t id = 0;
    std::string type, key;
  };
  std::vector<Event> events;
};

// An operator's word on deliveries (`resolve` or `redeliver`), or what was left unsettled.
struct OperatorWord {
  std::string action, endpoint;
  std::vector<std::int64_t> event_ids;
  bool delivered = false;  // resolve's answer
  int status = 0;          // the HTTP status of the word (0: no answer)
};

// Reads a history file: operations by id (an invoke with no completion is `unknown`: the
// harness itself was killed while it was in flight), the nemesis events and the outbox's lines.
struct History {
  std::vector<Op> ops;
  std::vector<nlohmann::json> events;
  std::vector<Received> received;  // in the order the receivers read them
  std::vector<FeedPage> feed;
  std::vector<OperatorWord> words;
  std::vector<nlohmann::json> consumer;  // the consumer's saves and the position read back
};
History load_history(const std::string& path);
// The same in two steps: a history's lines as they were written (lines cut short skipped), and
// the history they make (the planted violations edit the lines in between).
std::vector<nlohmann::json> read_history_lines(const std::string& path);
History history_from_lines(const std::vector<nlohmann::json>& lines);

}  // namespace onceorder::torture
