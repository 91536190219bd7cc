// The torture harness's receivers: a small HTTP server on a loopback port per endpoint (the
// at_least_once one, the at_most_once one, or the naive poller's), standing in for the MES or
// ERP behind an endpoint. Each request is read whole, its signature verified (RECEIVING.md §1),
// and written to the history (history.hpp, `receive`) with what the receiver did:
//
//   ok       a good signature: acted on it, then answered 200
//   refused  a bad signature: answered 401, did nothing
//   fail     the fault receiver_fail: answered 500 before acting
//   stall    the fault receiver_stall: read it, never answered (closed after `stall`)
//   drop     the fault receiver_drop: read it, closed without an answer
//
// `acted` is what a receiver may have done with what it read: true for ok, and for stall and
// drop (a receiver may act on a request and die before it answers); false only for an answer
// that surely came before acting (401, 500). A receiver does not dedupe: the checker counts
// what it acted on.
//
// Thread-safety: every member may be called from any thread; each connection is served on a
// thread of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "history.hpp"

namespace onceorder::torture {

enum class ReceiverFault { none, fail, stall, drop };

struct ReceiverOptions {
  std::string name;    // alo, amo or poller: the endpoint it stands behind
  std::string mode;    // at_least_once, at_most_once, or poller (the integrator's own loop)
  std::string secret;  // empty: requests come unsigned (the naive poller's)
  // How long a stalled request is held before the connection is closed: past the sender's
  // --delivery-timeout, so that the sender gives up first.
  std::chrono::milliseconds stall{1500};
  // How long acting on a request takes (the naive poller's receiver: its poller is then
  // mostly between a POST and saving its position, where a kill does its harm).
  std::chrono::milliseconds act_time{0};
  // Where it listens: the servers' side of the bridge when they run in network namespaces.
  std::string address = "127.0.0.1";
};

class Receiver {
 public:
  Receiver(ReceiverOptions options, HistoryWriter& history);
  ~Receiver();  // stops
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  bool start();  // listens on a free loopback port
  void stop();   // stops accepting, and waits for the connections being served
  std::uint16_t port() const { return port_; }
  const ReceiverOptions& options() const { return options_; }

  // From now on, for `length`, every request meets `fault`; ReceiverFault::none heals.
  void fault(ReceiverFault fault, std::chrono::milliseconds length);
  // Whether the receiver acted on (or may have acted on) this event: the operator's truth.
  bool acted_on(std::int64_t event_id) const;
  std::int64_t requests() const { return requests_; }

 private:
  void accept_loop();
  void serve(int fd);
  ReceiverFault current_fault() const;
  void log(const std::map<std::string, std::string>& headers, const std::string& body,
           const std::string& verified, const char* did, bool acted);

  ReceiverOptions options_;
  HistoryWriter& history_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> requests_{0};

  mutable std::mutex mu_;
  std::condition_variable idle_;
  int active_ = 0;  // connections being served
  ReceiverFault fault_ = ReceiverFault::none;
  std::chrono::steady_clock::time_point fault_until_;
  std::set<std::int64_t> acted_;
  std::map<std::int64_t, std::set<std::string>> bodies_;  // event id → the body hashes seen
};

// Hex SHA-256.
std::string sha256_hex(const std::string& data);

}  // namespace onceorder::torture
