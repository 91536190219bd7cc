// The webhook sender against tiny loopback servers made of raw Asio sockets: every way a send
// can end, and how each is classified (the safety of at_most_once rests on it). The https cases
// use a CA and certificates the test makes with the `openssl` command in a temp directory, given
// to the sender through SSL_CERT_FILE; nothing here needs the network.
#include "http/webhook_sender.hpp"

#include <utility>  // before any Asio header (Boost 1.74)

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace onceorder::http {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

// Reads one HTTP request (header and Content-Length body) from a blocking stream; what was
// read, even if the request was cut short.
template <class Stream>
std::string webhook_test_read_request(Stream& s) {
  std::string data;
  boost::system::error_code ec;
  const std::size_t head = asio::read_until(s, asio::dynamic_buffer(data), "\r\n\r\n", ec);
  if (ec) return data;
  std::size_t length = 0;
  const auto at = data.find("Content-Length: ");
  if (at != std::string::npos && at < head) length = std::stoul(data.substr(at + 16));
  if (data.size() < head + length) {
    const std::size_t have = data.size();
    data.resize(head + length);
    asio::read(s, asio::buffer(data.data() + have, head + length - have), ec);
  }
  return data;
}

std::string webhook_test_answer(int status, const std::string& body = "ok") {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         body;
}

// A loopback server: each connection it accepts is handed to `handle` on a thread of its own.
// What it read is kept in `requests()` by the handlers that call `note`.
class WebhookTestServer {
 public:
  using Handler = std::function<void(tcp::socket&, WebhookTestServer&)>;
  explicit WebhookTestServer(Handler handle)
      : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    accept_thread_ = std::thread([this, handle = std::move(handle)] {
      for (;;) {
        tcp::socket s(io_);
        boost::system::error_code ec;
        acceptor_.accept(s, ec);
        if (ec || stopping_) return;
        std::lock_guard lock(mu_);
        handlers_.emplace_back([this, handle, sock = std::move(s)]() mutable {
          handle(sock, *this);
          boost::system::error_code ignored;
          sock.close(ignored);
        });
      }
    });
  }
  ~WebhookTestServer() {
    stopping_ = true;
    tcp::socket wake(io_);  // unblocks accept()
    boost::system::error_code ec;
    wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
    accept_thread_.join();
    std::vector<std::thread> handlers;  // joined unlocked: a handler may still note()
    {
      std::lock_guard lock(mu_);
      handlers.swap(handlers_);
    }
    for (auto& t : handlers) t.join();
  }
  std::uint16_t port() const { return port_; }
  std::string url(const std::string& scheme = "http", const std::string& host = "127.0.0.1") {
    return scheme + "://" + host + ":" + std::to_string(port_) + "/hook?x=1";
  }
  void note(std::string request) {
    std::lock_guard lock(mu_);
    requests_.push_back(std::move(request));
  }
  std::vector<std::string> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // The notes once there are `n` (or what there is after two seconds).
  std::vector<std::string> requests(std::size_t n) {
    for (int i = 0; i < 200 && requests().size() < n; ++i) std::this_thread::sleep_for(10ms);
    return requests();
  }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex mu_;
  std::vector<std::thread> handlers_;  // guarded by mu_
  std::vector<std::string> requests_;  // guarded by mu_
};

// Reads the request and writes `answer` as it is.
WebhookTestServer::Handler webhook_test_answering(std::string answer) {
  return [answer](tcp::socket& s, WebhookTestServer& server) {
    server.note(webhook_test_read_request(s));
    boost::system::error_code ec;
    asio::write(s, asio::buffer(answer), ec);
  };
}

SendRequest webhook_test_request(const std::string& url) {
  return {url, R"({"id":7,"type":"order.placed"})", {{"Idempotency-Key", "7"}}};
}

SendReport webhook_test_send(const std::string& url, std::chrono::milliseconds timeout = 2s) {
  WebhookSender sender;
  const std::vector<SendRequest> requests = {webhook_test_request(url)};
  auto reports = sender.send(requests, timeout);
  EXPECT_EQ(reports.size(), 1u);
  return reports.at(0);
}

TEST(WebhookSender, A200IsDeliveredAndTheRequestIsAsSpecified) {
  WebhookTestServer server(webhook_test_answering(webhook_test_answer(200)));
  const SendReport r = webhook_test_send(server.url());
  EXPECT_EQ(r.result, SendResult::delivered) << r.error;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.error, "");
  const auto got = server.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].starts_with("POST /hook?x=1 HTTP/1.1\r\n")) << got[0];
  EXPECT_NE(got[0].find("Idempotency-Key: 7\r\n"), std::string::npos) << got[0];
  EXPECT_NE(got[0].find("Connection: close\r\n"), std::string::npos) << got[0];
  EXPECT_NE(got[0].find("Host: 127.0.0.1:" + std::to_string(server.port())), std::string::npos);
  EXPECT_TRUE(got[0].ends_with("\r\n\r\n" + webhook_test_request("").body)) << got[0];
}

TEST(WebhookSender, A500IsRefusedWithItsStatus) {
  WebhookTestServer server(webhook_test_answering(webhook_test_answer(500, "down")));
  const SendReport r = webhook_test_send(server.url());
  EXPECT_EQ(r.result, SendResult::refused);
  EXPECT_EQ(r.http_status, 500);
  EXPECT_EQ(r.error, "HTTP 500");
}

TEST(WebhookSender, AHugeAnswerCountsAsTheStatusItCarried) {
  const std::string huge(4 * WebhookSender::kAnswerBodyLimit, 'x');
  for (const int status : {200, 503}) {
    WebhookTestServer server(webhook_test_answering(webhook_test_answer(status, huge)));
    const SendReport r = webhook_test_send(server.url());
    EXPECT_EQ(r.result, status == 200 ? SendResult::delivered : SendResult::refused) << r.error;
    EXPECT_EQ(r.http_status, status);
  }
}

TEST(WebhookSender, ClosedAfterReadingWithoutAnAnswerIsUnknown) {
  WebhookTestServer server(
      [](tcp::socket& s, WebhookTestServer& self) { self.note(webhook_test_read_request(s)); });
  const SendReport r = webhook_test_send(server.url());
  EXPECT_EQ(r.result, SendResult::unknown);
  EXPECT_FALSE(r.http_status.has_value());
  EXPECT_NE(r.error, "");
  EXPECT_EQ(server.requests().size(), 1u) << "the receiver had the request";
}

TEST(WebhookSender, AnAnswerCutShortIsUnknown) {
  WebhookTestServer server(webhook_test_answering(
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nonly ten b"));
  const SendReport r = webhook_test_send(server.url());
  EXPECT_EQ(r.result, SendResult::unknown) << "a 200 whose body broke off is no complete answer";
}

TEST(WebhookSender, AnInterimAnswerIsFollowedToTheFinalOne) {
  WebhookTestServer server(
      webhook_test_answering("HTTP/1.1 100 Continue\r\n\r\n" + webhook_test_answer(201)));
  const SendReport r = webhook_test_send(server.url());
  EXPECT_EQ(r.result, SendResult::delivered) << r.error;
  EXPECT_EQ(r.http_status, 201);
}

TEST(WebhookSender, AcceptedAndNeverAnsweredIsUnknownAfterTheTimeout) {
  WebhookTestServer server([](tcp::socket& s, WebhookTestServer& self) {
    self.note(webhook_test_read_request(s));
    std::this_thread::sleep_for(800ms);
  });
  const auto start = std::chrono::steady_clock::now();
  const SendReport r = webhook_test_send(server.url(), 300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.result, SendResult::unknown);
  EXPECT_NE(r.error.find("timed out"), std::string::npos) << r.error;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 1200ms);
}

TEST(WebhookSender, NothingListeningIsRefused) {
  std::uint16_t port = 0;
  {
    asio::io_context io;
    tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = probe.local_endpoint().port();
  }
  const SendReport r = webhook_test_send("http://127.0.0.1:" + std::to_string(port) + "/");
  EXPECT_EQ(r.result, SendResult::refused);
  EXPECT_FALSE(r.http_status.has_value());
  EXPECT_NE(r.error.find("no connection"), std::string::npos) << r.error;
}

TEST(WebhookSender, ABadUrlIsRefused) {
  const SendReport bad = webhook_test_send("ftp://example.com/");
  EXPECT_EQ(bad.result, SendResult::refused);
  EXPECT_NE(bad.error.find("bad URL"), std::string::npos) << bad.error;
}

TEST(WebhookSender, AllRequestsOfOneSendGoAtOnce) {
  WebhookTestServer server([](tcp::socket& s, WebhookTestServer& self) {
    self.note(webhook_test_read_request(s));
    std::this_thread::sleep_for(400ms);
    boost::system::error_code ec;
    asio::write(s, asio::buffer(webhook_test_answer(200)), ec);
  });
  WebhookSender sender;
  const std::vector<SendRequest> requests(4, webhook_test_request(server.url()));
  const auto start = std::chrono::steady_clock::now();
  const auto reports = sender.send(requests, 3s);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1200ms) << "one after the other";
  ASSERT_EQ(reports.size(), 4u);
  for (const auto& r : reports) EXPECT_EQ(r.result, SendResult::delivered) << r.error;
}

// The CA, a server certificate it signed for localhost and 127.0.0.1, one it signed for
// another name, and a self-signed one, made once in a temp directory.
class WebhookTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() /
           ("onceorder-webhook-tls-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    const std::string d = dir_.string();
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string commands =
        "cd " + d + " && openssl req -x509" + key +
        " -keyout ca.key -out ca.pem -days 2 -subj /CN=OnceOrder-Test-CA && " +
        sign("server", "localhost", "DNS:localhost,IP:127.0.0.1", key) + " && " +
        sign("other", "other.example", "DNS:other.example", key) + " && openssl req -x509" + key +
        " -keyout self.key -out self.pem -days 2 -subj /CN=localhost -addext "
        "subjectAltName=DNS:localhost,IP:127.0.0.1";
    ready_ = std::system(("(" + commands + ") >" + d + "/openssl.log 2>&1").c_str()) == 0;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::string sign(const std::string& name, const std::string& cn, const std::string& san,
                          const std::string& key) {
    return "openssl req" + key + " -keyout " + name + ".key -out " + name + ".csr -subj /CN=" + cn +
           " && printf 'subjectAltName=" + san + "' > " + name + ".ext && openssl x509 -req -in " +
           name + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out " + name +
           ".pem -extfile " + name + ".ext";
  }

  void SetUp() override {
    ASSERT_TRUE(ready_) << "openssl failed; see " << dir_ / "openssl.log";
    if (const char* old = std::getenv("SSL_CERT_FILE")) saved_ = old;
    setenv("SSL_CERT_FILE", (dir_ / "ca.pem").c_str(), 1);
  }
  void TearDown() override {
    if (saved_) {
      setenv("SSL_CERT_FILE", saved_->c_str(), 1);
    } else {
      unsetenv("SSL_CERT_FILE");
    }
  }

  // A TLS server with certificate `name` that answers 200 after a completed handshake, and
  // notes the server name (SNI) the client sent.
  static WebhookTestServer::Handler tls_server(const std::string& name) {
    auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
    ctx->use_certificate_chain_file((dir_ / (name + ".pem")).string());
    ctx->use_private_key_file((dir_ / (name + ".key")).string(), asio::ssl::context::pem);
    return [ctx](tcp::socket& s, WebhookTestServer& self) {
      asio::ssl::stream<tcp::socket&> tls(s, *ctx);
      boost::system::error_code ec;
      tls.handshake(asio::ssl::stream_base::server, ec);
      if (ec) {
        self.note("handshake failed");
        return;
      }
      const char* sni = SSL_get_servername(tls.native_handle(), TLSEXT_NAMETYPE_host_name);
      self.note(std::string("sni=") + (sni ? sni : "") + "\n" + webhook_test_read_request(tls));
      asio::write(tls, asio::buffer(webhook_test_answer(200)), ec);
    };
  }

  static inline std::filesystem::path dir_;
  static inline bool ready_ = false;
  std::optional<std::string> saved_;
};

TEST_F(WebhookTlsTest, ACertificateOfTheGivenCaIsDeliveredWithSni) {
  WebhookTestServer server(tls_server("server"));
  const SendReport by_name = webhook_test_send(server.url("https", "localhost"));
  EXPECT_EQ(by_name.result, SendResult::delivered) << by_name.error;
  const SendReport by_address = webhook_test_send(server.url("https"));
  EXPECT_EQ(by_address.result, SendResult::delivered) << by_address.error;
  const auto got = server.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].starts_with("sni=localhost\nPOST /hook?x=1 ")) << got[0];
  EXPECT_TRUE(got[1].starts_with("sni=\nPOST ")) << "no SNI for an address: " << got[1];
}

TEST_F(WebhookTlsTest, ASelfSignedCertificateIsRefusedAndNothingIsWritten) {
  WebhookTestServer server(tls_server("self"));
  const SendReport r = webhook_test_send(server.url("https", "localhost"));
  EXPECT_EQ(r.result, SendResult::refused);
  EXPECT_NE(r.error.find("TLS handshake failed"), std::string::npos) << r.error;
  // The server's side of the failed handshake, noted when it gave up.
  EXPECT_EQ(server.requests(1), std::vector<std::string>{"handshake failed"});
}

TEST_F(WebhookTlsTest, ACertificateForAnotherHostIsRefused) {
  WebhookTestServer server(tls_server("other"));
  const SendReport r = webhook_test_send(server.url("https", "localhost"));
  EXPECT_EQ(r.result, SendResult::refused);
  EXPECT_NE(r.error.find("TLS handshake failed"), std::string::npos) << r.error;
}

// A timeout before the request was written is a refusal too: nothing can have arrived.
TEST_F(WebhookTlsTest, AHandshakeThatNeverEndsIsRefusedAfterTheTimeout) {
  WebhookTestServer server(
      [](tcp::socket&, WebhookTestServer&) { std::this_thread::sleep_for(800ms); });
  const SendReport r = webhook_test_send(server.url("https"), 300ms);
  EXPECT_EQ(r.result, SendResult::refused);
  EXPECT_EQ(r.error, "TLS handshake failed: timed out");
}

TEST_F(WebhookTlsTest, PlainHttpAnsweredToATlsClientIsRefused) {
  WebhookTestServer server([](tcp::socket& s, WebhookTestServer&) {
    boost::system::error_code ec;
    asio::write(s, asio::buffer(webhook_test_answer(200)), ec);
  });
  const SendReport r = webhook_test_send(server.url("https"));
  EXPECT_EQ(r.result, SendResult::refused) << "the handshake failed: nothing was written";
}

}  // namespace
}  // namespace onceorder::http
