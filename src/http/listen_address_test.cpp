#include "http/listen_address.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

namespace asio = boost::asio;

TEST(ParseListen, HostAndPort) {
  auto v4 = parse_listen("127.0.0.1:8080");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8080);
  auto v6 = parse_listen("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_EQ(parse_listen("localhost:65535")->port, 65535);
  for (std::string_view bad : {"", "8080", ":8080", "host:", "host:65536", "host:-1", "host:8o",
                               "::1:80", "[::1]80", "[::1:80"}) {
    EXPECT_FALSE(parse_listen(bad).ok()) << bad;
  }
}

TEST(IsLoopback, OnlyLoopbackAddresses) {
  for (const char* a : {"127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(is_loopback(asio::ip::make_address(a))) << a;
  }
  for (const char* a : {"0.0.0.0", "::", "10.0.0.1", "192.168.1.1", "::ffff:10.0.0.1", "fe80::1"}) {
    EXPECT_FALSE(is_loopback(asio::ip::make_address(a))) << a;
  }
}

TEST(ResolveListen, LiteralsAndLocalhost) {
  auto ep = resolve_listen({"127.0.0.1", 9});
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->port(), 9);
  auto local = resolve_listen({"localhost", 0});
  ASSERT_TRUE(local.ok()) << local.status().to_string();
  EXPECT_TRUE(is_loopback(local->address()));
}

}  // namespace
}  // namespace onceorder::http
