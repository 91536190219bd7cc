// The writers of one SQLite file in this process, served in arrival order.
//
// SQLite's own wait for its write lock (busy_timeout) polls with sleeps of up to 100 ms, so a
// writer that commits and begins again at once (a batch run's loop, item after item) takes
// the lock back before a sleeping writer wakes: the others wait for the whole loop, and a
// request meets lock_timeout behind it. A write transaction takes its turn here first
// (a queue in arrival order) and then BEGIN IMMEDIATE, whose busy_timeout is left to bound the
// wait for another process's writer.
//
// Thread-safety: every method may be called from any thread; a turn is given back by whoever
// holds the connection that took it, on any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

namespace onceorder::store::sqlite {

class WriterTurns {
 public:
  // The queue of the file at `path` (one per file in the process, shared by its connections).
  static std::shared_ptr<WriterTurns> of(const std::string& path);

  // Waits for this writer's turn until `until`: true once it holds it, false when the turn did
  // not come by then (the writer left the queue).
  bool take(std::chrono::steady_clock::time_point until);
  // Ends the holder's turn: the next writer in line has it.
  void give_back();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::uint64_t> waiting_;  // tickets, in arrival order
  std::uint64_t next_ticket_ = 0;
  bool held_ = false;
};

}  // namespace onceorder::store::sqlite
