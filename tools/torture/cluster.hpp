// What the torture harness runs and breaks: `onceorder serve` processes on fixed loopback
// ports, and the database they share (a SQLite file, or a PostgreSQL primary with a
// synchronous standby managed by tools/torture/pgcluster), read from outside OnceOrder.
//
// Thread-safety: a Serve is driven by one thread at a time (the nemesis, or the harness
// while healing); Database::rows may be called from any thread (each call runs its own
// psql/sqlite3 process).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace onceorder::torture {

// A loopback port that was free a moment ago.
std::uint16_t free_port();

class Serve {
 public:
  Serve(std::string bin, std::string db_url, std::uint16_t port, std::vector<std::string> args,
        std::string log_path);
  ~Serve();
  Serve(const Serve&) = delete;
  Serve& operator=(const Serve&) = delete;

  // Starts the process and waits (at most `wait_s`) until /healthz answers.
  bool start(int wait_s = 30);
  // From the next start on, runs in network namespace `netns` (`ip netns exec`, which keeps
  // the pid) and listens on `address` instead of 127.0.0.1.
  void place(std::string netns, std::string address);
  // Gives an option of the command line another value from the next start on.
  void set_option(const std::string& name, const std::string& value);
  void kill_hard();  // SIGKILL, and reaps it
  void pause();      // SIGSTOP
  void resume();     // SIGCONT
  void terminate();  // SIGTERM, then SIGKILL after 10 s
  bool running() const { return pid_ > 0; }
  bool paused() const { return paused_; }
  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  std::string bin_, db_url_;
  std::uint16_t port_;
  std::vector<std::string> args_;
  std::string log_path_;
  std::string netns_, address_ = "127.0.0.1";
  pid_t pid_ = -1;
  bool paused_ = false;
};

class Database {
 public:
  // `sqlite:PATH`, or a pgcluster directory (with its script) for PostgreSQL.
  static Database sqlite(const std::string& path);
  static Database postgres(const std::string& pgcluster, const std::string& base);

  bool is_postgres() const { return postgres_; }
  const std::string& url() const { return url_; }
  // Rows of a query, columns split; throws when the query fails.
  std::vector<std::vector<std::string>> rows(const std::string& sql) const;
  std::int64_t number(const std::string& sql) const;
  void exec(const std::string& sql) const { (void)rows(sql); }

  // PostgreSQL only: crash-restart the primary; fail over to the standby.
  bool restart() const;
  bool failover() const;
  bool wait_sync() const;
  // The cluster script's `fault BASE KIND SEED` (tools/torture/patroni-cluster): what it did.
  bool fault(const std::string& kind, std::uint64_t seed, std::string* what) const;
  const std::string& script() const { return pgcluster_; }
  const std::string& base() const { return base_; }

 private:
  bool pgcluster(const char* verb) const;  // runs `pgcluster VERB BASE`
  bool postgres_ = false;
  std::string url_, sqlite_path_, pgcluster_, base_;
};

// Runs a shell command; its exit status (and stdout into `out` when given).
int run_command(const std::string& cmd, std::string* out = nullptr);

}  // namespace onceorder::torture
