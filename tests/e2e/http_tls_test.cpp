// `onceorder serve` as a process at the network edge: HTTPS with a certificate made at test
// time (verified by the client against it), plain HTTP refused on that port, the certificate
// read again on SIGHUP (and kept when the new files are broken), plain HTTP refused on a
// non-loopback address unless a TLS proxy is declared, and /metrics on a listener of its own.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/stat.h>

#include <utility>  // before any Asio header (Boost 1.74)

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "e2e/http_fixture.hpp"
#include "e2e/serve_process.hpp"

namespace onceorder::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using namespace std::chrono_literals;

constexpr auto kTlsTestTimeout = 5s;

struct TlsAnswer {
  int status = 0;  // 0: no HTTP answer (`error` says why)
  std::string body;
  std::string fingerprint;  // SHA-256 of the certificate the server showed, hex
  std::string error;
};

std::string tls_hex(const unsigned char* data, unsigned len) {
  std::string out;
  for (unsigned i = 0; i < len; ++i) out += fmt::format("{:02x}", data[i]);
  return out;
}

std::string tls_fingerprint(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (!cert || X509_digest(cert, EVP_sha256(), md, &len) != 1) return {};
  return tls_hex(md, len);
}

// The SHA-256 fingerprint of the PEM certificate in `file`.
std::string tls_file_fingerprint(const std::filesystem::path& file) {
  FILE* f = std::fopen(file.c_str(), "r");
  if (!f) return {};
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  std::string out = tls_fingerprint(cert);
  X509_free(cert);
  return out;
}

// One request over a new TLS connection to 127.0.0.1:port that trusts only `ca_file` and
// checks the certificate names 127.0.0.1.
TlsAnswer tls_exchange(std::uint16_t port, const std::filesystem::path& ca_file, bhttp::verb verb,
                       const std::string& target, const std::string& body = {}) {
  TlsAnswer a;
  try {
    asio::io_context io;
    ssl::context ctx(ssl::context::tls_client);
    ctx.load_verify_file(ca_file.string());
    ctx.set_verify_mode(ssl::verify_peer);
    beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
    stream.set_verify_callback(ssl::host_name_verification("127.0.0.1"));
    auto& tcp = beast::get_lowest_layer(stream);
    tcp.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    const timeval tv{5, 0};
    setsockopt(tcp.socket().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    stream.handshake(ssl::stream_base::client);
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    X509* peer = SSL_get1_peer_certificate(stream.native_handle());
#else
    X509* peer = SSL_get_peer_certificate(stream.native_handle());
#endif
    a.fingerprint = tls_fingerprint(peer);
    X509_free(peer);
    bhttp::request<bhttp::string_body> req{verb, target, 11};
    req.set(bhttp::field::host, fmt::format("127.0.0.1:{}", port));
    req.set(bhttp::field::authorization, std::string("Bearer ") + kTestAdminToken);
    if (!body.empty()) req.set(bhttp::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    bhttp::write(stream, req);
    beast::flat_buffer buffer;
    bhttp::response<bhttp::string_body> res;
    bhttp::read(stream, buffer, res);
    a.status = res.result_int();
    a.body = res.body();
  } catch (const std::exception& e) {
    a.error = e.what();
  }
  return a;
}

// Sends a plain HTTP request to the port and returns everything received until the server
// closed the connection ("timeout" when it neither answered nor closed in time).
std::string tls_plain_exchange(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "no connection";
  }
  const timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string req = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string got;
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      got.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) got += "timeout";
    break;
  }
  close(fd);
  return got;
}

// True once `text` appears in the process's output within kTlsTestTimeout.
bool tls_log_shows_within(ServeProcess& serve, const std::string& text,
                          std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (serve.output().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

bool tls_log_shows(ServeProcess& serve, const std::string& text) {
  const auto until = std::chrono::steady_clock::now() + kTlsTestTimeout;
  while (serve.output().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class TlsServeTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<TestDb>(GetParam());
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("onceorder-tls-{}-{}", getpid(), ++counter_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  const std::string& url() const { return scratch_->url(); }

  // A self-signed certificate for 127.0.0.1 and its key: dir_/NAME.crt, dir_/NAME.key.
  void make_certificate(const std::string& name) {
    const auto base = (dir_ / name).string();
    const std::string command = fmt::format(
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
        "-subj /CN={} -addext subjectAltName=IP:127.0.0.1 -keyout {}.key -out {}.crt "
        ">/dev/null 2>&1",
        name, base, base);
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  std::string cert(const std::string& name) const { return (dir_ / (name + ".crt")).string(); }
  std::string key(const std::string& name) const { return (dir_ / (name + ".key")).string(); }

  // A tokens file (mode 0600) with one admin token.
  std::string tokens_file() {
    const auto path = dir_ / "tokens";
    std::ofstream(path) << "tls-test-admin-token-0123456789abcdefghij admin tls\n";
    chmod(path.c_str(), 0600);
    return path.string();
  }

  std::filesystem::path dir_;

 private:
  static inline int counter_ = 0;
  std::unique_ptr<TestDb> scratch_;
};

TEST_P(TlsServeTest, ServesHttpsAndRefusesPlainHttpOnThatPort) {
  make_certificate("a");
  ServeProcess serve(url(), {"--tls-cert", cert("a"), "--tls-key", key("a")});
  const std::uint16_t port = serve.port();
  ASSERT_NE(port, 0) << serve.output();

  const auto health = tls_exchange(port, cert("a"), bhttp::verb::get, "/healthz");
  EXPECT_EQ(health.status, 200) << health.error;
  EXPECT_EQ(health.fingerprint, tls_file_fingerprint(cert("a")));
  const auto put = tls_exchange(port, cert("a"), bhttp::verb::put, "/v1/warehouses/1/skus/101",
                                R"({"price_cents":1,"available":5})");
  EXPECT_EQ(put.status, 201) << put.error << put.body;
  const auto read = tls_exchange(port, cert("a"), bhttp::verb::get, "/v1/warehouses/1/skus/101");
  EXPECT_EQ(read.status, 200) << read.error;
  EXPECT_NE(read.body.find("\"available\":5"), std::string::npos) << read.body;

  // Plain HTTP gets no HTTP answer: the handshake fails and the connection is closed.
  const std::string plain = tls_plain_exchange(port);
  EXPECT_EQ(plain.find("HTTP/"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("timeout"), std::string::npos) << "not closed: " << plain;
  // A client that trusts another certificate does not get through.
  make_certificate("other");
  EXPECT_EQ(tls_exchange(port, cert("other"), bhttp::verb::get, "/healthz").status, 0);
}

TEST_P(TlsServeTest, SighupReadsTheCertificateAgainAndABrokenOneKeepsTheOld) {
  make_certificate("a");
  make_certificate("b");
  const auto live_cert = dir_ / "live.crt";
  const auto live_key = dir_ / "live.key";
  std::filesystem::copy_file(cert("a"), live_cert);
  std::filesystem::copy_file(key("a"), live_key);
  const auto both = dir_ / "both.crt";
  std::ofstream(both) << std::ifstream(cert("a")).rdbuf() << std::ifstream(cert("b")).rdbuf();

  ServeProcess serve(url(), {"--tls-cert", live_cert.string(), "--tls-key", live_key.string()});
  const std::uint16_t port = serve.port();
  ASSERT_NE(port, 0) << serve.output();
  EXPECT_EQ(tls_exchange(port, both, bhttp::verb::get, "/healthz").fingerprint,
            tls_file_fingerprint(cert("a")));

  std::filesystem::copy_file(cert("b"), live_cert,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(key("b"), live_key, std::filesystem::copy_options::overwrite_existing);
  // Sent again until it is seen: the process installs its SIGHUP handler just after it
  // starts listening (an earlier one is ignored).
  bool reloaded = false;
  for (int i = 0; i < 20 && !reloaded; ++i) {
    serve.signal(SIGHUP);
    reloaded = tls_log_shows_within(serve, "read again", 500ms);
  }
  ASSERT_TRUE(reloaded) << serve.output();
  const auto after = tls_exchange(port, both, bhttp::verb::get, "/healthz");
  EXPECT_EQ(after.status, 200) << after.error;
  EXPECT_EQ(after.fingerprint, tls_file_fingerprint(cert("b")));

  // A broken certificate file: logged, and the last good certificate is still served.
  std::ofstream(live_cert, std::ios::trunc) << "not a certificate\n";
  serve.signal(SIGHUP);
  ASSERT_TRUE(tls_log_shows(serve, "TLS reload failed")) << serve.output();
  const auto kept = tls_exchange(port, both, bhttp::verb::get, "/healthz");
  EXPECT_EQ(kept.status, 200) << kept.error;
  EXPECT_EQ(kept.fingerprint, tls_file_fingerprint(cert("b")));
  EXPECT_FALSE(serve.wait_exit(100ms).has_value()) << "SIGHUP must not end the process";
}

TEST_P(TlsServeTest, PlainHttpOnANonLoopbackAddressNeedsATlsProxy) {
  const std::string tokens = tokens_file();
  ServeProcess refused(url(), {"--listen", "0.0.0.0:0", "--tokens", tokens});
  EXPECT_EQ(refused.wait_exit(15s), 2) << refused.output();
  for (const char* named : {"--tls-cert", "--tls-key", "--behind-tls-proxy"}) {
    EXPECT_NE(refused.output().find(named), std::string::npos) << refused.output();
  }

  ServeProcess proxied(url(), {"--listen", "0.0.0.0:0", "--tokens", tokens, "--behind-tls-proxy"});
  const std::uint16_t port = proxied.port();
  ASSERT_NE(port, 0) << proxied.output();
  HttpClient client(port, kTlsTestTimeout);
  EXPECT_EQ(client.get("/healthz").status, 200);

  make_certificate("a");
  ServeProcess tls(url(), {"--listen", "0.0.0.0:0", "--tokens", tokens, "--tls-cert", cert("a"),
                           "--tls-key", key("a")});
  const std::uint16_t tls_port = tls.port();
  ASSERT_NE(tls_port, 0) << tls.output();
  EXPECT_EQ(tls_exchange(tls_port, cert("a"), bhttp::verb::get, "/healthz").status, 200);
}

TEST_P(TlsServeTest, MetricsListenServesMetricsAloneAndTheMainPortNoLonger) {
  ServeProcess serve(url(), {"--metrics-listen", "127.0.0.1:0"});
  const std::uint16_t port = serve.port();
  ASSERT_NE(port, 0) << serve.output();
  ASSERT_TRUE(tls_log_shows(serve, "serving /metrics alone")) << serve.output();
  static const std::regex kMetricsPort(R"(serving /metrics alone on \S+ port (\d+))");
  std::smatch m;
  const std::string output = serve.output();
  ASSERT_TRUE(std::regex_search(output, m, kMetricsPort)) << output;
  const auto metrics_port = static_cast<std::uint16_t>(std::stoi(m[1].str()));

  HttpClient metrics(metrics_port, kTlsTestTimeout);
  const auto scraped = metrics.get("/metrics");
  EXPECT_EQ(scraped.status, 200);
  EXPECT_NE(scraped.body.find("onceorder_"), std::string::npos);
  EXPECT_EQ(metrics.get("/healthz").status, 404);
  EXPECT_EQ(metrics.get("/v1/warehouses/1/skus").status, 404);

  HttpClient main(port, kTlsTestTimeout);
  EXPECT_EQ(main.get("/metrics").status, 404);
  EXPECT_EQ(main.get("/healthz").status, 200);
}

INSTANTIATE_TEST_SUITE_P(Engines, TlsServeTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
