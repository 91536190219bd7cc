#include "http/edge.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

Request edge_request(bhttp::verb method, std::string target,
                     std::vector<std::pair<std::string, std::string>> fields) {
  Request req{method, target, 11};
  for (const auto& [name, value] : fields) req.insert(name, value);
  return req;
}

EdgePolicy edge_policy() {
  auto policy = EdgePolicy::make("0.0.0.0", {"Orders.Example", "fd00::1", "[fd00::2]:9"},
                                 {"https://console.example", "http://other.example:8080"});
  EXPECT_TRUE(policy.ok()) << policy.status().to_string();
  return *policy;
}

TEST(EdgeAuthority, SplitsHostAndPort) {
  EXPECT_EQ(parse_authority("LocalHost:8080")->host, "localhost");
  EXPECT_EQ(parse_authority("LocalHost:8080")->port, "8080");
  EXPECT_EQ(parse_authority("[::1]:80")->host, "::1");
  EXPECT_EQ(parse_authority("[::1]")->port, "");
  for (const char* bad : {"", ":80", "a b", "user@host", "host:80x", "host:123456", "[::1",
                          "[zz::1]", "::1", "host:80:80", "[::1]x"}) {
    EXPECT_FALSE(parse_authority(bad)) << bad;
  }
}

TEST(EdgePolicy, HostsAndOrigins) {
  const EdgePolicy p = edge_policy();
  for (const char* ok : {"localhost", "127.0.0.1:1", "[::1]:8080", "0.0.0.0", "orders.example",
                         "ORDERS.EXAMPLE:443", "[fd00::1]", "[fd00::2]:1"}) {
    EXPECT_TRUE(p.host_allowed(*parse_authority(ok))) << ok;
  }
  EXPECT_FALSE(p.host_allowed(*parse_authority("evil.example")));
  EXPECT_FALSE(p.host_allowed(*parse_authority("localhost.evil.example")));
  for (const char* ok :
       {"http://localhost:8080", "https://orders.example", "https://console.example",
        "https://console.example:443", "http://other.example:8080"}) {
    EXPECT_TRUE(p.origin_allowed(ok)) << ok;
  }
  for (const char* bad : {"null", "http://console.example", "https://console.example:8443",
                          "http://other.example", "ftp://localhost", "http://evil.example", ""}) {
    EXPECT_FALSE(p.origin_allowed(bad)) << bad;
  }
  EXPECT_FALSE(EdgePolicy::make("127.0.0.1", {"bad host"}, {}).ok());
  EXPECT_FALSE(EdgePolicy::make("127.0.0.1", {}, {"console.example"}).ok());
}

TEST(EdgeFraming, OnlyAFinalLoneChunked) {
  auto status = [](std::vector<std::pair<std::string, std::string>> fields) {
    auto refusal = framing_refusal(edge_request(bhttp::verb::post, "/", std::move(fields)));
    return refusal ? refusal->result_int() : 0;
  };
  EXPECT_EQ(status({{"Transfer-Encoding", "chunked"}}), 0);
  EXPECT_EQ(status({{"Transfer-Encoding", " Chunked "}}), 0);
  EXPECT_EQ(status({{"Content-Length", "5"}}), 0);
  for (const char* te : {"identity", "xchunked", "chunked, gzip", "gzip", "", "chunked, chunked",
                         ",chunked, chunked"}) {
    EXPECT_EQ(status({{"Transfer-Encoding", te}}), 400) << te;
  }
  EXPECT_EQ(status({{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}}), 400);
  EXPECT_EQ(status({{"Transfer-Encoding", "gzip"}, {"Transfer-Encoding", "chunked"}}), 501);
  EXPECT_EQ(status({{"Transfer-Encoding", "gzip, chunked"}}), 501);
  EXPECT_EQ(status({{"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}}), 400);
  EXPECT_EQ(status({{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}}), 400);
}

TEST(EdgePolicy, ChecksTheHeaderInOrder) {
  const EdgePolicy p = edge_policy();
  auto status = [&](bhttp::verb method, std::string target,
                    std::vector<std::pair<std::string, std::string>> fields) {
    Request req = edge_request(method, std::move(target), std::move(fields));
    auto refusal = p.check(req);
    return refusal ? refusal->result_int() : 0;
  };
  using enum bhttp::verb;
  EXPECT_EQ(status(get, "/", {{"Host", "localhost"}}), 0);
  EXPECT_EQ(status(get, "/", {}), 400);
  EXPECT_EQ(status(get, "/", {{"Host", "localhost"}, {"Host", "localhost"}}), 400);
  EXPECT_EQ(status(get, "/", {{"Host", "evil.example"}}), 421);
  EXPECT_EQ(status(get, "http://evil.example/", {{"Host", "localhost"}}), 421);
  EXPECT_EQ(
      status(get, "/", {{"Host", "localhost"}, {"Authorization", "a"}, {"Authorization", "a"}}),
      400);
  // Origin matters for changes only; a body must be JSON.
  EXPECT_EQ(status(get, "/", {{"Host", "localhost"}, {"Origin", "http://evil.example"}}), 0);
  EXPECT_EQ(status(post, "/", {{"Host", "localhost"}, {"Origin", "http://evil.example"}}), 403);
  EXPECT_EQ(status(delete_, "/", {{"Host", "localhost"}}), 0);
  EXPECT_EQ(status(post, "/", {{"Host", "localhost"}, {"Content-Length", "0"}}), 0);
  EXPECT_EQ(status(post, "/", {{"Host", "localhost"}, {"Content-Length", "2"}}), 415);
  EXPECT_EQ(
      status(put, "/",
             {{"Host", "localhost"}, {"Content-Length", "2"}, {"Content-Type", "text/plain"}}),
      415);
  EXPECT_EQ(status(patch, "/",
                   {{"Host", "localhost"},
                    {"Transfer-Encoding", "chunked"},
                    {"Content-Type", "application/json ; charset=utf-8"}}),
            0);
  EXPECT_EQ(
      status(
          post, "/",
          {{"Host", "localhost"}, {"Content-Length", "2"}, {"Content-Type", "application/jsonx"}}),
      415);
}

TEST(EdgePolicy, TheAbsoluteFormBecomesTheOriginForm) {
  const EdgePolicy p = edge_policy();
  for (const auto& [absolute, origin] : std::vector<std::pair<std::string, std::string>>{
           {"http://localhost:8080/healthz", "/healthz"},
           {"HTTPS://localhost?x=1", "/?x=1"},
           {"http://localhost", "/"},
           {"/v1/scopes", "/v1/scopes"}}) {
    Request req = edge_request(bhttp::verb::get, absolute, {{"Host", "localhost"}});
    EXPECT_FALSE(p.check(req)) << absolute;
    EXPECT_EQ(sv(req.target()), origin) << absolute;
  }
}

}  // namespace
}  // namespace onceorder::http
