// The HTTP server's record of each client connection (server.cpp). I/O thread only.
#pragma once

#include <utility>  // before any Asio header (Boost 1.74 awaitable.hpp misses it)

#include <boost/beast/core/tcp_stream.hpp>

#include "onceorder/store/store.hpp"

namespace onceorder::http {

// One client connection, as seen by stop() and by the connection cap. Requests being
// handled or answered are never cut short by either; connections waiting for a request
// or still receiving one are closed at stop, and shed (the oldest first) at the cap.
struct SessionEntry {
  enum class State {
    idle,       // waiting for a request (keep-alive): nothing received yet
    receiving,  // part of a request (header or body) has arrived
    handling,   // the request is complete and being handled
    answering,  // the response is being written
  };
  boost::beast::tcp_stream* stream = nullptr;
  State state = State::idle;
  store::Clock::time_point since = store::Clock::now();  // when `state` began

  void enter(State s) {
    state = s;
    since = store::Clock::now();
  }
  bool sheddable() const { return state == State::idle || state == State::receiving; }
  // Closes the socket now, which frees its descriptor at once. (Cancelling would not do:
  // a read that has completed but whose handler has not run yet is not cancelled, and the
  // session would carry on.) The session's next operation fails and it ends.
  void close_now() const { stream->close(); }
};

}  // namespace onceorder::http
