// `onceorder endpoint test NAME` (the built binary, ONCEORDER_BIN) against tiny receivers, on
// every engine: one that verifies signatures (onceorder/core/signature.hpp) passes; one that
// accepts everything, one that answers 500 and a URL nobody listens on fail; an unknown
// endpoint is exit code 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>

#include "common/test_db.hpp"
#include "e2e/webhook_receiver.hpp"
#include "onceorder/core/signature.hpp"
#include "onceorder/service/outbox.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kEndpointTestSecret = "endpoint-test-secret-0123456789";

struct EndpointCliRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

EndpointCliRun endpoint_cli(const std::string& args) {
  EndpointCliRun r;
  FILE* p = popen((onceorder_bin() + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A receiver as RECEIVING.md asks: 401 unless the signature holds.
Reaction verifying(const Received& r, int) {
  const auto check = verify_signature(r.header("onceorder-signature"), kEndpointTestSecret, r.body,
                                      static_cast<std::int64_t>(std::time(nullptr)));
  return Reaction::answer(check == SignatureCheck::ok ? 200 : 401);
}

class CliEndpointTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override { db_ = std::make_unique<TestDb>(GetParam()); }

  void put_endpoint(const std::string& name, const std::string& url) {
    auto db = db_->open();
    EndpointSpec spec;
    spec.name = name;
    spec.url = url;
    spec.secret = kEndpointTestSecret;
    auto put = Outbox(*db).put_endpoint(spec, store::Clock::now() + 10s);
    ASSERT_TRUE(put.ok()) << put.status().to_string();
  }
  EndpointCliRun test(const std::string& name) {
    return endpoint_cli("--db '" + db_->migrated_url() + "' endpoint test " + name +
                        " --timeout 2s");
  }

  std::unique_ptr<TestDb> db_;
};

TEST_P(CliEndpointTest, AReceiverThatVerifiesSignaturesPasses) {
  WebhookReceiver receiver(verifying);
  put_endpoint("mes", receiver.url("/in"));
  const auto run = test("mes");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("ok: "), std::string::npos) << run.output;

  const auto got = receiver.received();
  ASSERT_EQ(got.size(), 3u) << run.output;
  EXPECT_EQ(got[0].target, "/in");
  const std::string key = got[0].header("idempotency-key");
  EXPECT_TRUE(key.starts_with("test-")) << key;
  EXPECT_EQ(got[1].header("idempotency-key"), key) << "the repeat has the same key";
  EXPECT_EQ(got[1].body, got[0].body);
  EXPECT_NE(got[2].header("idempotency-key"), key);
  EXPECT_EQ(std::vector<int>({got[0].status, got[1].status, got[2].status}),
            std::vector<int>({200, 200, 401}));
  EXPECT_EQ(got[0].header("onceorder-event-type"), "endpoint.test");
  EXPECT_EQ(got[0].header("content-type"), "application/json");
  const auto event = nlohmann::json::parse(got[0].body);
  EXPECT_EQ(event["type"], "endpoint.test");
  EXPECT_EQ(event["id"], 0);
  EXPECT_EQ(event["key"], key);
  EXPECT_EQ(event["data"]["endpoint"], "mes");
  EXPECT_TRUE(event.contains("occurred_at"));
}

TEST_P(CliEndpointTest, AReceiverThatAcceptsABadSignatureFails) {
  WebhookReceiver receiver;  // 200 to everything
  put_endpoint("lax", receiver.url());
  const auto run = test("lax");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("FAIL: the badly signed request was accepted"), std::string::npos)
      << run.output;
  EXPECT_EQ(receiver.received().size(), 3u);
}

TEST_P(CliEndpointTest, AReceiverThatRefusesSignedEventsFails) {
  WebhookReceiver receiver([](const Received&, int) { return Reaction::answer(500); });
  put_endpoint("down", receiver.url());
  const auto run = test("down");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("the signed event was not taken"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("HTTP 500"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("no 4xx"), std::string::npos) << run.output;
}

TEST_P(CliEndpointTest, NoReceiverFailsAndSaysWhy) {
  std::string url;
  {
    WebhookReceiver gone;
    url = gone.url();
  }
  put_endpoint("gone", url);
  const auto run = test("gone");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("no answer (refused: no connection"), std::string::npos) << run.output;
}

TEST_P(CliEndpointTest, AnUnknownEndpointIsExitCode2) {
  const auto run = test("nobody");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("no endpoint named \"nobody\""), std::string::npos) << run.output;
}

INSTANTIATE_TEST_SUITE_P(Engines, CliEndpointTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
