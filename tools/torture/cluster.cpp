#include "cluster.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace onceorder::torture {
namespace {

bool healthz(const std::string& address, std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[64] = {};
      const ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
      ok = n > 12 && std::string(buf, 12) == "HTTP/1.1 200";
    }
  }
  close(fd);
  return ok;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

}  // namespace

std::uint16_t free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

int run_command(const std::string& cmd, std::string* out) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::array<char, 65536> buf{};
  std::string text;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) text.append(buf.data(), n);
  const int status = pclose(p);
  if (out) *out = std::move(text);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Serve::Serve(std::string bin, std::string db_url, std::uint16_t port, std::vector<std::string> args,
             std::string log_path)
    : bin_(std::move(bin)),
      db_url_(std::move(db_url)),
      port_(port),
      args_(std::move(args)),
      log_path_(std::move(log_path)) {}

Serve::~Serve() {
  if (pid_ > 0) kill_hard();
}

bool Serve::start(int wait_s) {
  if (pid_ > 0) return true;
  std::vector<std::string> argv_s;
  if (!netns_.empty()) argv_s = {"/usr/bin/ip", "netns", "exec", netns_};
  argv_s.insert(argv_s.end(), {bin_, "--db", db_url_, "serve", "--listen",
                               address_ + ":" + std::to_string(port_)});
  argv_s.insert(argv_s.end(), args_.begin(), args_.end());
  // Plain HTTP on the bridge's private test address, which is not loopback.
  if (!netns_.empty()) argv_s.push_back("--behind-tls-proxy");
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_ = fork();
  if (pid_ == 0) {  // only async-signal-safe calls from here on
    if (log >= 0) {
      dup2(log, 1);
      dup2(log, 2);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (log >= 0) close(log);
  paused_ = false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
  while (std::chrono::steady_clock::now() < until) {
    if (healthz(address_, port_)) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;  // it exited (e.g. the port was still taken): the caller may try again
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void Serve::place(std::string netns, std::string address) {
  netns_ = std::move(netns);
  address_ = std::move(address);
}

void Serve::set_option(const std::string& name, const std::string& value) {
  for (size_t i = 0; i + 1 < args_.size(); ++i) {
    if (args_[i] == name) {
      args_[i + 1] = value;
      return;
    }
  }
  args_.insert(args_.end(), {name, value});
}

void Serve::kill_hard() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  paused_ = false;
}

void Serve::pause() {
  if (pid_ > 0 && kill(pid_, SIGSTOP) == 0) paused_ = true;
}

void Serve::resume() {
  if (pid_ > 0) kill(pid_, SIGCONT);
  paused_ = false;
}

void Serve::terminate() {
  if (pid_ <= 0) return;
  resume();
  kill(pid_, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill_hard();
}

Database Database::sqlite(const std::string& path) {
  Database d;
  d.sqlite_path_ = path;
  d.url_ = "sqlite:" + path;
  return d;
}

Database Database::postgres(const std::string& pgcluster, const std::string& base) {
  Database d;
  d.postgres_ = true;
  d.pgcluster_ = pgcluster;
  d.base_ = base;
  std::string url;
  if (run_command(shell_quote(pgcluster) + " url " + shell_quote(base), &url) != 0)
    throw std::runtime_error("pgcluster url failed for " + base);
  while (!url.empty() && (url.back() == '\n' || url.back() == ' ')) url.pop_back();
  d.url_ = url;
  return d;
}

std::vector<std::vector<std::string>> Database::rows(const std::string& sql) const {
  // The query goes through a file: no quoting of SQL for the shell.
  char path[] = "/tmp/onceorder-torture-sql-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  {
    std::ofstream f(path);
    f << sql << (postgres_ ? ";\n" : ";\n");
  }
  close(fd);
  const std::string cmd = postgres_ ? "psql -qXAt -v ON_ERROR_STOP=1 -F $'\\x1f' " +
                                          shell_quote(url_) + " -f " + path + " 2>&1"
                                    : "sqlite3 -bail -batch -separator $'\\x1f' " +
                                          shell_quote(sqlite_path_) + " < " + path + " 2>&1";
  std::string out;
  int status = -1;
  // A query right after a fail-over may meet no primary for a moment: try a few times.
  for (int attempt = 0; attempt < 20; ++attempt) {
    status = run_command("bash -c " + shell_quote(cmd), &out);
    if (status == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::filesystem::remove(path);
  if (status != 0) throw std::runtime_error("query failed: " + out + "\nquery: " + sql);
  std::vector<std::vector<std::string>> result;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::vector<std::string> cols;
    const std::string line = out.substr(start, end - start);
    size_t c = 0;
    for (;;) {
      const size_t sep = line.find('\x1f', c);
      cols.push_back(line.substr(c, sep == std::string::npos ? std::string::npos : sep - c));
      if (sep == std::string::npos) break;
      c = sep + 1;
    }
    result.push_back(std::move(cols));
    start = end + 1;
  }
  return result;
}

std::int64_t Database::number(const std::string& sql) const {
  auto r = rows(sql);
  if (r.empty() || r[0].empty() || r[0][0].empty()) return 0;
  return std::stoll(r[0][0]);
}

bool Database::pgcluster(const char* verb) const {
  return run_command(shell_quote(pgcluster_) + " " + verb + " " + shell_quote(base_) + " >&2") == 0;
}

bool Database::restart() const { return postgres_ && pgcluster("restart"); }
bool Database::failover() const { return postgres_ && pgcluster("failover"); }
bool Database::wait_sync() const { return !postgres_ || pgcluster("wait-sync"); }

bool Database::fault(const std::string& kind, std::uint64_t seed, std::string* what) const {
  const int status = run_command(shell_quote(pgcluster_) + " fault " + shell_quote(base_) + " " +
                                     shell_quote(kind) + " " + std::to_string(seed % 32768),
                                 what);
  if (what)
    while (!what->empty() && what->back() == '\n') what->pop_back();
  return status == 0;
}

}  // namespace onceorder::torture
