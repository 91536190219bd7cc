#include "http/tokens_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "http/auth.hpp"

namespace onceorder::http {
namespace {

std::string base64url(const unsigned char* data, std::size_t size) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < size; ++i) {
    acc = (acc << 8) | data[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 0x3f];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 0x3f];
  return out;
}

Status file_error(const std::string& what, const std::string& path) {
  return Status(Code::invalid_request,
                fmt::format("cannot {} tokens file '{}': {}", what, path, std::strerror(errno)));
}

// Writes all of `text` to `fd` and makes it durable.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return ::fsync(fd) == 0;
}

}  // namespace

Result<std::string> new_token() {
  std::array<unsigned char, kTokenBytes> bytes{};
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status(Code::internal,
                    fmt::format("cannot read random bytes for a token: {}", std::strerror(errno)));
    }
    got += static_cast<std::size_t>(n);
  }
  return std::string(kTokenPrefix) + base64url(bytes.data(), bytes.size());
}

std::string default_tokens_path(const DbUrl& db, const std::string& state_dir,
                                const std::string& env_state_dir) {
  if (state_dir.empty() && db.engine == Engine::sqlite) {
    return db.target + std::string(kDbTokensSuffix);
  }
  std::string dir = state_dir;
  if (dir.empty()) dir = env_state_dir.substr(0, env_state_dir.find(':'));
  if (dir.empty()) dir = ".";
  return (std::filesystem::path(dir) / kStateTokensFile).string();
}

Result<std::optional<std::string>> create_tokens_file(const std::string& path) {
  if (::access(path.c_str(), F_OK) == 0) return std::optional<std::string>();
  OO_ASSIGN_OR_RETURN(std::string token, new_token());
  const std::string text = fmt::format(
      "# OnceOrder tokens: one 'token role [name]' per line; token is the token itself (at "
      "least {} characters)\n# or sha256:<its SHA-256 in hex>. Made by 'onceorder serve' at "
      "first start; add more with\n# 'onceorder token new ROLE [NAME]' (docs/OPERATIONS.md, "
      "\"Tokens\").\n{}\n",
      kMinPlainTokenLength, digest_line(token, "admin", kCreatedAdminName));
  std::string temp = path + ".XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);  // mode 0600
  if (fd < 0) return file_error("create", path);
  const bool written = ::fchmod(fd, 0600) == 0 && write_all(fd, text);
  ::close(fd);
  // link() fails with EEXIST rather than replace a file another process made meanwhile.
  const int linked = written ? ::link(temp.c_str(), path.c_str()) : -1;
  const int link_errno = errno;
  ::unlink(temp.c_str());
  if (!written) return file_error("write", path);
  if (linked != 0 && link_errno == EEXIST) return std::optional<std::string>();
  errno = link_errno;
  if (linked != 0) return file_error("create", path);
  return std::optional<std::string>(std::move(token));
}

}  // namespace onceorder::http
