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
  void note(const nlohmann::json& event);  // nemesis events, for the reader's timeline

 private:
  void write(const nlohmann::json& line);
  std::mutex mu_;
  std::ofstream out_;
  std::int64_t start_ms_;
};

// Reads a history file: operations by id (an invoke with no completion is `unknown`: the
// harness itself was killed while it was in flight) and the nemesis events.
struct History {
  std::vector<Op> ops;
  std::vector<nlohmann::json> events;
};
History load_history(const std::string& path);

}  // namespace onceorder::torture
