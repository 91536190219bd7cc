// The HTTP edge (docs/API.md, "The HTTP edge"), tested as an attacker would, over raw sockets:
// a page elsewhere sending a no-preflight POST, a rebound host name, smuggled requests in every
// Transfer-Encoding shape and header order, and the HTTP/1.1 rules (Host, HEAD, the absolute
// form, 304, duplicate Authorization, the body read only once the request is admitted). Each
// refused write is checked through the API to have written nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "e2e/http_fixture.hpp"
#include "e2e/serve_process.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

const std::string kAdminToken = "edge-admin-token-0123456789abcdef0123456789";

// A client socket that sends bytes as given and reads whatever comes back.
class EdgeSocket {
 public:
  explicit EdgeSocket(std::uint16_t port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~EdgeSocket() {
    if (fd_ >= 0) close(fd_);
  }
  EdgeSocket(const EdgeSocket&) = delete;
  EdgeSocket& operator=(const EdgeSocket&) = delete;

  bool send_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads until `until` appears in what came (empty: until the server closes) or `wait`
  // passes; `closed` tells whether the server closed the connection.
  std::string read(std::chrono::milliseconds wait, std::string_view until = {}) {
    const auto end = std::chrono::steady_clock::now() + wait;
    while (until.empty() || received_.find(until) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[8192];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed = true;
        break;
      }
      received_.append(buf, static_cast<size_t>(n));
    }
    return received_;
  }

  bool closed = false;

 private:
  int fd_;
  std::string received_;
};

// One exchange: sends `bytes`, reads until the server closes (or 3 s pass).
struct EdgeExchange {
  std::string bytes;
  bool closed = false;
};
EdgeExchange edge_exchange(std::uint16_t port, const std::string& bytes) {
  EdgeSocket s(port);
  s.send_all(bytes);
  EdgeExchange out;
  out.bytes = s.read(3s);
  out.closed = s.closed;
  return out;
}

// The status of every response in `bytes`, in order (interim ones too). A response's body
// may end without a line break, so a status line is found wherever it stands.
std::vector<int> edge_statuses(const std::string& bytes) {
  static const std::regex kStatusLine(R"(HTTP/1\.1 (\d{3}) )");
  std::vector<int> out;
  for (auto it = std::sregex_iterator(bytes.begin(), bytes.end(), kStatusLine);
       it != std::sregex_iterator(); ++it) {
    out.push_back(std::stoi((*it)[1].str()));
  }
  return out;
}

// The first response's header fields (names lower-case) and what follows them.
struct EdgeReply {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string rest;  // the bytes after the header

  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};
EdgeReply edge_parse(const std::string& bytes) {
  EdgeReply out;
  const size_t end = bytes.find("\r\n\r\n");
  if (bytes.size() < 12 || end == std::string::npos) return out;
  out.status = std::stoi(bytes.substr(9, 3));
  size_t line = bytes.find("\r\n") + 2;
  while (line < end) {
    const size_t eol = bytes.find("\r\n", line);
    const std::string field = bytes.substr(line, eol - line);
    const size_t colon = field.find(':');
    std::string name = field.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = field.substr(field.find_first_not_of(' ', colon + 1));
    line = eol + 2;
  }
  out.rest = bytes.substr(end + 4);
  return out;
}

std::string edge_code(const EdgeReply& r) {
  const auto body = json::parse(r.rest, nullptr, false);
  return body.is_object() ? body.value("code", "") : "";
}

// The Authorization line of the harness's admin token (http_client.hpp).
std::string test_bearer() {
  return std::string("Authorization: Bearer ") + kTestAdminToken + "\r\n";
}

class EdgeHttpTest : public HttpTest {
 protected:
  std::string host() const { return fmt::format("127.0.0.1:{}", port()); }

  // A request with `headers` (each ending in CRLF) and `body`, Content-Length set unless
  // `headers` frames it itself.
  std::string request(const std::string& start, const std::string& headers,
                      const std::string& body = {}) const {
    const bool framed = headers.find("Content-Length") != std::string::npos ||
                        headers.find("Transfer-Encoding") != std::string::npos;
    std::string out = start + " HTTP/1.1\r\n" + headers;
    // The test's admin token unless the test sends its own: each refusal is the edge's own.
    if (headers.find("Authorization") == std::string::npos) out += test_bearer();
    if (!framed && !body.empty()) out += fmt::format("Content-Length: {}\r\n", body.size());
    return out + "Connection: close\r\n\r\n" + body;
  }

  // True when the source order SITE/`order_no`/1 did not exist: placing it now creates it.
  bool source_order_is_new(const std::string& site, const std::string& order_no) {
    const json orders = {
        {{"site_code", site}, {"order_no", order_no}, {"lot_no", "1"}, {"quantity", 1}}};
    const auto r = client().post("/v1/source-orders", json{{"orders", orders}}.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 && r.json().value("created", -1) == 1;
  }

  json sku() { return client().get("/v1/warehouses/1/skus/101").json(); }
  size_t run_count() { return client().get("/v1/schedule/runs").json()["runs"].size(); }
};

// The issue's attack: a page at evil.example sends fetch(..., {mode: "no-cors"}) with a text
// body (no preflight) to start a run and to adjust stock. Both are refused; nothing is written.
TEST_P(EdgeHttpTest, NoCorsPostFromAnotherOriginIsRefusedAndWritesNothing) {
  ASSERT_EQ(client().put("/v1/warehouses/1/skus/101", R"({"price_cents":1,"available":5})").status,
            201);
  ASSERT_TRUE(source_order_is_new("EDGE", "CANDIDATE"));  // a run would have work to do
  const std::string evil = "Origin: http://evil.example\r\nContent-Type: text/plain\r\n";
  const std::string targets[] = {"POST /v1/schedule/runs",
                                 "POST /v1/warehouses/1/skus/101/adjustments"};
  const std::string bodies[] = {"{}", R"({"delta":-5,"reason":"stolen"})"};
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(targets[i]);
    const auto r = edge_parse(
        edge_exchange(port(), request(targets[i], "Host: " + host() + "\r\n" + evil, bodies[i]))
            .bytes);
    EXPECT_EQ(r.status, 403);
    EXPECT_EQ(edge_code(r), "forbidden");
    // The same from an allowed page, but as text/plain: 415; from the other origin as JSON: 403.
    const std::string plain = "Host: " + host() + "\r\nContent-Type: text/plain; charset=utf-8\r\n";
    EXPECT_EQ(edge_parse(edge_exchange(port(), request(targets[i], plain, bodies[i])).bytes).status,
              415);
    const std::string json_evil = "Host: " + host() + "\r\nOrigin: http://evil.example\r\n" +
                                  "Content-Type: application/json\r\n";
    EXPECT_EQ(
        edge_parse(edge_exchange(port(), request(targets[i], json_evil, bodies[i])).bytes).status,
        403);
  }
  EXPECT_EQ(run_count(), 0u);
  EXPECT_EQ(sku()["available"], 5);

  // The console's own page (its origin is the server's) may write, in any case of the type.
  const std::string own = "Host: " + host() + "\r\nOrigin: http://" + host() +
                          "\r\nContent-Type: Application/JSON; Charset=UTF-8\r\n";
  const auto adjusted = edge_parse(
      edge_exchange(port(), request(targets[1], own, R"({"delta":-1,"reason":"count"})")).bytes);
  EXPECT_EQ(adjusted.status, 201) << adjusted.rest;
  EXPECT_EQ(sku()["available"], 4);
  // A client that sends no Origin (curl, another server) is not refused for that.
  EXPECT_EQ(
      client().post("/v1/warehouses/1/skus/101/adjustments", R"({"delta":-1,"reason":"c"})").status,
      201);
  // A body-less POST needs no Content-Type (the cancel button sends none).
  const auto stop = edge_parse(
      edge_exchange(port(), request("POST /v1/schedule/runs/99/stop", "Host: " + host() + "\r\n"))
          .bytes);
  EXPECT_EQ(stop.status, 404) << stop.rest;
}

TEST_P(EdgeHttpTest, AllowedOriginsAndHostsComeFromTheOptions) {
  ServerOptions options;
  options.allowed_hosts = {"orders.example", "[fd00::1]:9000"};
  options.allowed_origins = {"https://console.example"};
  start_server(options);
  const std::string body = R"({"price_cents":1})";
  auto put = [&](const std::string& headers) {
    return edge_parse(
               edge_exchange(port(), request("PUT /v1/warehouses/1/skus/7",
                                             "Content-Type: application/json\r\n" + headers, body))
                   .bytes)
        .status;
  };
  EXPECT_EQ(put("Host: orders.example:8443\r\nOrigin: https://console.example\r\n"), 201);
  EXPECT_EQ(put("Host: ORDERS.example\r\nOrigin: https://orders.example:8443\r\n"), 200);
  EXPECT_EQ(put("Host: [fd00::1]:8080\r\nOrigin: https://console.example:443\r\n"), 200);
  EXPECT_EQ(put("Host: orders.example\r\nOrigin: http://console.example\r\n"), 403);
  EXPECT_EQ(put("Host: orders.example\r\nOrigin: null\r\n"), 403);
  EXPECT_EQ(put("Host: elsewhere.example\r\n"), 421);
  // A malformed entry is refused at start.
  ServerOptions bad;
  bad.allowed_origins = {"console.example"};
  bad.listen = "127.0.0.1:0";
  EXPECT_FALSE(Server::start(db(), scheduler(), intake(), bad).ok());
}

// DNS rebinding: evil.example now resolves to 127.0.0.1, and the page's requests carry its
// own name. Refused 421 before anything is read or run, and the connection is closed.
TEST_P(EdgeHttpTest, ReboundHostIs421AndNothingRuns) {
  const json orders = {
      {{"site_code", "EDGE"}, {"order_no", "REBOUND"}, {"lot_no", "1"}, {"quantity", 1}}};
  const auto sent =
      edge_exchange(port(), request("POST /v1/source-orders",
                                    "Host: evil.example:8080\r\nContent-Type: application/json\r\n",
                                    json{{"orders", orders}}.dump()));
  const auto r = edge_parse(sent.bytes);
  EXPECT_EQ(r.status, 421);
  EXPECT_EQ(r.header("content-type"), "application/problem+json");
  EXPECT_EQ(edge_code(r), "misdirected_request");
  EXPECT_TRUE(sent.closed);
  EXPECT_EQ(edge_statuses(sent.bytes), std::vector<int>{421});
  // Reads too: the page would otherwise read the answers as its own.
  EXPECT_EQ(
      edge_parse(
          edge_exchange(port(), request("GET /v1/schedule/runs", "Host: evil.example\r\n")).bytes)
          .status,
      421);
  EXPECT_TRUE(source_order_is_new("EDGE", "REBOUND"));
  // The names this server always answers to.
  for (const std::string h : {"localhost", "LOCALHOST:1", "127.0.0.1", "[::1]:8080"}) {
    EXPECT_EQ(
        edge_parse(edge_exchange(port(), request("GET /healthz", "Host: " + h + "\r\n")).bytes)
            .status,
        200)
        << h;
  }
}

TEST_P(EdgeHttpTest, MissingDuplicateOrMalformedHostIs400) {
  EXPECT_EQ(edge_parse(edge_exchange(port(), request("GET /healthz", "")).bytes).status, 400);
  EXPECT_EQ(edge_parse(edge_exchange(port(), request("GET /healthz",
                                                     "Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n"))
                           .bytes)
                .status,
            400);
  EXPECT_EQ(edge_parse(edge_exchange(port(), request("GET /healthz",
                                                     "Host: 127.0.0.1\r\nHost: evil.example\r\n"))
                           .bytes)
                .status,
            400);
  EXPECT_EQ(
      edge_parse(edge_exchange(port(), request("GET /healthz", "Host: user@127.0.0.1\r\n")).bytes)
          .status,
      400);
  EXPECT_EQ(
      edge_parse(edge_exchange(port(), request("GET /healthz", "Host: 127.0.0.1:80x\r\n")).bytes)
          .status,
      400);
}

// The shapes that smuggled a request past a proxy: the outer request's body is a whole
// `POST /v1/source-orders`. Each is refused and the connection closed: the inner one never
// runs, whichever of Transfer-Encoding and Content-Length comes first.
TEST_P(EdgeHttpTest, SmuggledRequestsNeverRun) {
  const std::vector<std::string> codings = {"identity",
                                            "xchunked",
                                            "chunked, gzip",
                                            "gzip",
                                            "",
                                            "chunked, chunked",
                                            "chunked\r\nTransfer-Encoding: chunked",
                                            "gzip\r\nTransfer-Encoding: chunked, identity"};
  int n = 0;
  for (const std::string& coding : codings) {
    for (const std::string order : {"te-only", "cl-first", "te-first"}) {
      const std::string order_no = fmt::format("SMUGGLED{}", n++);
      const json orders = {
          {{"site_code", "EDGE"}, {"order_no", order_no}, {"lot_no", "1"}, {"quantity", 1}}};
      const std::string inner_body = json{{"orders", orders}}.dump();
      const std::string inner = fmt::format(
          "POST /v1/source-orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          "{}Content-Length: {}\r\n\r\n{}",
          test_bearer(), inner_body.size(), inner_body);
      const std::string te = "Transfer-Encoding: " + coding + "\r\n";
      const std::string cl = fmt::format("Content-Length: {}\r\n", inner.size());
      std::string headers =
          "Host: " + host() + "\r\nContent-Type: application/json\r\n" + test_bearer();
      headers += order == "te-only" ? te : order == "cl-first" ? cl + te : te + cl;
      const std::string outer =
          "POST /v1/scopes/EDGE/documents HTTP/1.1\r\n" + headers + "\r\n" + inner;
      SCOPED_TRACE(fmt::format("Transfer-Encoding: [{}], {}", coding, order));
      const auto sent = edge_exchange(port(), outer);
      const auto statuses = edge_statuses(sent.bytes);
      ASSERT_EQ(statuses.size(), 1u) << sent.bytes;
      EXPECT_TRUE(statuses[0] == 400 || statuses[0] == 501) << sent.bytes;
      EXPECT_TRUE(sent.closed);
      EXPECT_TRUE(source_order_is_new("EDGE", order_no));
    }
  }
  EXPECT_EQ(client().get("/v1/scopes/EDGE").status, 404);  // the outer request did not run either
}

TEST_P(EdgeHttpTest, AFinalChunkedIsReadAndAnUnknownCodingBeforeItIs501) {
  const std::string body = R"({"title":"chunked"})";
  ASSERT_EQ(client().put("/v1/scopes/EDGE", "{}").status, 201);
  const std::string chunked = fmt::format("{:x}\r\n{}\r\n0\r\n\r\n", body.size(), body);
  const std::string headers = "Host: " + host() + "\r\nContent-Type: application/json\r\n";
  auto post = [&](const std::string& te) {
    return edge_parse(
        edge_exchange(port(), request("POST /v1/scopes/EDGE/documents",
                                      headers + "Transfer-Encoding: " + te + "\r\n", chunked))
            .bytes);
  };
  EXPECT_EQ(post("chunked").status, 201);
  EXPECT_EQ(post("Chunked").status, 201);
  const auto gzip = post("gzip, chunked");
  EXPECT_EQ(gzip.status, 501);
  EXPECT_EQ(edge_code(gzip), "not_implemented");
  EXPECT_EQ(client().get("/v1/scopes/EDGE").json().value("issued", -1), 2);
}

TEST_P(EdgeHttpTest, HeadIsAnsweredAsGetWithoutTheBody) {
  ASSERT_EQ(client().put("/v1/scopes/EDGE", "{}").status, 201);
  for (const std::string target :
       {"/healthz", "/v1/scopes/EDGE", "/", "/openapi.json", "/v1/nowhere"}) {
    SCOPED_TRACE(target);
    const auto get = edge_parse(
        edge_exchange(port(), request("GET " + target, "Host: " + host() + "\r\n")).bytes);
    const auto sent = edge_exchange(port(), request("HEAD " + target, "Host: " + host() + "\r\n"));
    const auto head = edge_parse(sent.bytes);
    EXPECT_EQ(head.status, get.status);
    EXPECT_FALSE(get.rest.empty());
    EXPECT_EQ(head.rest, "");  // nothing after the header
    EXPECT_EQ(head.header("content-length"), std::to_string(get.rest.size()));
    EXPECT_EQ(head.header("content-type"), get.header("content-type"));
  }
  // A route without GET: HEAD is 405 too, and Allow names HEAD wherever it names GET.
  const auto post_only = edge_parse(
      edge_exchange(port(), request("HEAD /v1/source-orders", "Host: " + host() + "\r\n")).bytes);
  EXPECT_EQ(post_only.status, 405);
  EXPECT_EQ(post_only.header("allow"), "POST");
  EXPECT_EQ(client().request(Method::delete_, "/v1/scopes/EDGE").header("allow"), "GET, HEAD, PUT");
}

TEST_P(EdgeHttpTest, TheAbsoluteFormIsAcceptedAndItsAuthorityIsTheHost) {
  const auto ok =
      edge_parse(edge_exchange(port(), request(fmt::format("GET http://{}/healthz", host()),
                                               "Host: " + host() + "\r\n"))
                     .bytes);
  EXPECT_EQ(ok.status, 200) << ok.rest;
  const auto query = edge_parse(
      edge_exchange(port(), request("GET HTTP://localhost?x=1", "Host: " + host() + "\r\n")).bytes);
  EXPECT_EQ(query.status, 200);  // the dashboard's index
  const auto evil = edge_parse(
      edge_exchange(port(), request("GET http://evil.example/healthz", "Host: " + host() + "\r\n"))
          .bytes);
  EXPECT_EQ(evil.status, 421);
}

TEST_P(EdgeHttpTest, NotModifiedSendsNoContentLength) {
  const auto full = client().get("/");
  ASSERT_EQ(full.status, 200);
  const std::string etag = full.header("etag");
  ASSERT_FALSE(etag.empty());
  const auto sent = edge_exchange(
      port(), request("GET /", "Host: " + host() + "\r\nIf-None-Match: " + etag + "\r\n"));
  const auto r = edge_parse(sent.bytes);
  EXPECT_EQ(r.status, 304);
  EXPECT_FALSE(r.headers.contains("content-length")) << sent.bytes;
  EXPECT_EQ(r.header("etag"), etag);
  EXPECT_EQ(r.rest, "");
}

TEST_P(EdgeHttpTest, UnreadableQueryNamesAreNeverEchoed) {
  ASSERT_EQ(client().put("/v1/scopes/EDGE", "{}").status, 201);
  for (const std::string target : {"/v1/scopes/EDGE?%FF=1", "/v1/scopes/EDGE?%01x=1",
                                   "/v1/invariants?%FF=1", "/v1/scopes/EDGE?%FF=1&%FF=2"}) {
    SCOPED_TRACE(target);
    const auto r = client().get(target);
    expect_problem(r, 400, "invalid_request");
    EXPECT_FALSE(r.json().contains("errors")) << r.body;
  }
  // A readable unknown name is still named.
  expect_problem(client().get("/v1/scopes/EDGE?x=1"), 400, "invalid_request", {"x"});
}

class EdgeAuthHttpTest : public EdgeHttpTest {
 protected:
  void SetUp() override {
    EdgeHttpTest::SetUp();
    if (HasFatalFailure()) return;
    ServerOptions options;
    options.tokens_file = write_tokens(kAdminToken + " admin edge-admin\n");
    start_server(options);
  }
  std::string bearer_line() const { return "Authorization: Bearer " + kAdminToken + "\r\n"; }
};

TEST_P(EdgeAuthHttpTest, DuplicateAuthorizationIs400) {
  const std::string body = R"({"width":4})";
  const std::string headers = "Host: " + host() + "\r\nContent-Type: application/json\r\n";
  const auto twice = edge_parse(
      edge_exchange(port(),
                    request("PUT /v1/scopes/EDGE",
                            headers + bearer_line() + "Authorization: Bearer wrong\r\n", body))
          .bytes);
  EXPECT_EQ(twice.status, 400);
  EXPECT_EQ(edge_code(twice), "invalid_request");
  const auto same =
      edge_parse(edge_exchange(port(), request("PUT /v1/scopes/EDGE",
                                               headers + bearer_line() + bearer_line(), body))
                     .bytes);
  EXPECT_EQ(same.status, 400);
  EXPECT_EQ(client().get("/v1/scopes/EDGE", bearer(kAdminToken)).status, 404);
  const auto once = edge_parse(
      edge_exchange(port(), request("PUT /v1/scopes/EDGE", headers + bearer_line(), body)).bytes);
  EXPECT_EQ(once.status, 201);
}

// A client without a valid token is answered on its header: its body is never waited for
// (the server would otherwise wait out the idle timeout here), and `Expect: 100-continue`
// is not answered 100 before a request is admitted.
TEST_P(EdgeAuthHttpTest, TheBodyIsReadOnlyOnceTheRequestIsAdmitted) {
  const std::string headers = "POST /v1/source-orders HTTP/1.1\r\nHost: " + host() +
                              "\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n";
  {
    EdgeSocket s(port());
    ASSERT_TRUE(s.send_all(headers + "\r\n{\"orders\": ["));
    const auto r = edge_parse(s.read(3s));
    EXPECT_EQ(r.status, 401);
    EXPECT_TRUE(s.closed);
  }
  {
    EdgeSocket s(port());
    ASSERT_TRUE(
        s.send_all(headers + "Expect: 100-continue\r\nAuthorization: Bearer wrong\r\n\r\n"));
    const std::string got = s.read(3s);
    EXPECT_EQ(edge_statuses(got), std::vector<int>{401}) << got;
    EXPECT_TRUE(s.closed);
  }
  // Admitted: 100 Continue, then the body is read and the request runs.
  const json orders = {
      {{"site_code", "EDGE"}, {"order_no", "CONTINUED"}, {"lot_no", "1"}, {"quantity", 1}}};
  const std::string body = json{{"orders", orders}}.dump();
  EdgeSocket s(port());
  ASSERT_TRUE(s.send_all(fmt::format(
      "POST /v1/source-orders HTTP/1.1\r\nHost: {}\r\n{}Content-Type: "
      "application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
      host(), bearer_line(), body.size())));
  ASSERT_NE(s.read(3s, "\r\n\r\n").find("HTTP/1.1 100 Continue"), std::string::npos);
  ASSERT_TRUE(s.send_all(body));
  const std::string got = s.read(3s);
  EXPECT_EQ(edge_statuses(got), (std::vector<int>{100, 200})) << got;
}

class EdgeServeTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override { scratch_ = std::make_unique<TestDb>(GetParam()); }
  const std::string& url() const { return scratch_->url(); }

 private:
  std::unique_ptr<TestDb> scratch_;
};

// The options as the binary takes them (comma lists), and a malformed one refused at start.
TEST_P(EdgeServeTest, ServeTakesAllowedHostsAndOrigins) {
  ServeProcess serve(url(), {"--allowed-hosts", "orders.example,10.0.0.5", "--allowed-origins",
                             "https://console.example"});
  const std::uint16_t p = serve.port();
  ASSERT_NE(p, 0) << serve.output();
  auto status = [&](const std::string& start, const std::string& headers) {
    const std::string req =
        start + " HTTP/1.1\r\n" + headers + test_bearer() + "Connection: close\r\n\r\n";
    return edge_parse(edge_exchange(p, req).bytes).status;
  };
  EXPECT_EQ(status("GET /healthz", "Host: orders.example:8080\r\n"), 200);
  EXPECT_EQ(status("GET /healthz", "Host: 10.0.0.5\r\n"), 200);
  EXPECT_EQ(status("GET /healthz", "Host: evil.example:8080\r\n"), 421);
  const std::string reap = "POST /v1/maintenance/reap";
  EXPECT_EQ(status(reap, "Host: orders.example\r\nOrigin: https://console.example\r\n"), 200);
  EXPECT_EQ(status(reap, "Host: orders.example\r\nOrigin: https://evil.example\r\n"), 403);
  ServeProcess bad(url(), {"--allowed-origins", "console.example"});
  EXPECT_EQ(bad.wait_exit(15s), 2) << bad.output();
}

INSTANTIATE_TEST_SUITE_P(Engines, EdgeAuthHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);
INSTANTIATE_TEST_SUITE_P(Engines, EdgeServeTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);
INSTANTIATE_TEST_SUITE_P(Engines, EdgeHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
