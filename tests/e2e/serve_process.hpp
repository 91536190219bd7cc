// `onceorder serve` (the binary named by ONCEORDER_BIN) as a child process on a free
// loopback port (or the --listen its arguments name), for what only a real process shows:
// signals and the descriptor limit. Its output is collected on a thread of its own so that
// logging never blocks it. Also raw "slow client" sockets that send part of a request and then
// keep quiet. Unless told otherwise, it is given a tokens file admitting kTestAdminToken (which
// HttpClient sends by default) when `extra` names none.
// Not thread-safe: one test thread drives a ServeProcess.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "e2e/http_client.hpp"

namespace onceorder::testing {

// A private temporary file (mode 0600) admitting kTestAdminToken, for `--tokens`; the caller
// removes it. Empty when it could not be written.
inline std::string write_test_tokens() {
  char path[] = "/tmp/onceorder-test-tokens-XXXXXX";
  const int fd = mkstemp(path);  // mode 0600
  if (fd < 0) return {};
  const std::string text = test_tokens_text();
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok ? std::string(path) : std::string();
}

enum class ServeTokens {
  test,  // --tokens with a file admitting kTestAdminToken, unless `extra` names one
  own,   // as `extra` says: without --tokens, serve finds or makes its own file
};

class ServeProcess {
 public:
  // `nofile` > 0 sets the child's RLIMIT_NOFILE (soft and hard) before it starts. `binary`
  // (default: ONCEORDER_BIN) runs in `directory` (default: this process's).
  explicit ServeProcess(const std::string& db_url, std::vector<std::string> extra = {},
                        rlim_t nofile = 0, std::string binary = {}, std::string directory = {},
                        ServeTokens tokens = ServeTokens::test) {
    const char* b = std::getenv("ONCEORDER_BIN");
    if (binary.empty()) binary = b ? b : "./onceorder";
    std::vector<std::string> args = {binary, "--db", db_url, "serve"};
    // A free loopback port unless `extra` names its own --listen.
    if (std::find(extra.begin(), extra.end(), "--listen") == extra.end()) {
      args.insert(args.end(), {"--listen", "127.0.0.1:0"});
    }
    if (tokens == ServeTokens::test &&
        std::find(extra.begin(), extra.end(), "--tokens") == extra.end()) {
      tokens_file_ = write_test_tokens();
      args.insert(args.end(), {"--tokens", tokens_file_});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {  // only async-signal-safe calls from here on
      if (nofile > 0) {
        const rlimit limit{nofile, nofile};
        setrlimit(RLIMIT_NOFILE, &limit);
      }
      if (!directory.empty() && chdir(directory.c_str()) != 0) _exit(126);
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      for (int fd = 3; fd < 4096; ++fd) close(fd);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    reader_ = std::thread([this, fd = fds[0]] {
      char buf[4096];
      for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        std::lock_guard lock(mu_);
        output_.append(buf, static_cast<size_t>(n));
        changed_.notify_all();
      }
      close(fd);
    });
  }

  ~ServeProcess() {
    if (pid_ > 0 && !exit_code_) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (reader_.joinable()) reader_.join();
    if (!tokens_file_.empty()) std::remove(tokens_file_.c_str());
  }

  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // The port from the "listening on … port N" log line; 0 when it did not come in `wait`.
  std::uint16_t port(std::chrono::milliseconds wait = std::chrono::seconds(15)) {
    static const std::regex kListening(R"(listening on \S+ port (\d+))");
    std::unique_lock lock(mu_);
    std::smatch m;
    changed_.wait_for(lock, wait, [&] { return std::regex_search(output_, m, kListening); });
    return m.empty() ? 0 : static_cast<std::uint16_t>(std::stoi(m[1].str()));
  }

  void signal(int sig) { kill(pid_, sig); }

  // The exit status once the process exited within `wait` (-1: killed by a signal).
  std::optional<int> wait_exit(std::chrono::milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    while (!exit_code_) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        break;
      }
      if (std::chrono::steady_clock::now() > until) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // The process is gone, its end of the pipe with it: the reader ends at EOF once it has the
    // last words, which output() must then hold (read before, they raced the exit).
    if (exit_code_ && reader_.joinable()) reader_.join();
    return exit_code_;
  }

  std::string output() {
    std::lock_guard lock(mu_);
    return output_;
  }

 private:
  std::string tokens_file_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::string output_;  // guarded by mu_
};

// A loopback connection that sent `bytes` (part of a request) and then keeps quiet;
// closed on destruction. fd() < 0 when it could not connect.
class SlowClient {
 public:
  SlowClient(std::uint16_t port, const std::string& bytes) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(fd_);
      fd_ = -1;
    }
    if (fd_ >= 0) send_bytes(bytes);
  }
  ~SlowClient() {
    if (fd_ >= 0) close(fd_);
  }
  SlowClient(SlowClient&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  SlowClient& operator=(SlowClient&&) = delete;

  // False once the server closed the connection.
  bool send_bytes(const std::string& bytes) {
    return fd_ >= 0 && ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
                           static_cast<ssize_t>(bytes.size());
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace onceorder::testing
