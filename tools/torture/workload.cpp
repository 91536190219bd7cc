#include "workload.hpp"

#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "e2e/http_client.hpp"

namespace onceorder::torture {
namespace {

using testing::HttpClient;
using testing::HttpResponse;
using Json = nlohmann::json;

// How an HTTP answer counts (history.hpp).
Outcome classify(const std::string& type, int status, const Json& body) {
  const std::string code = body.is_object() ? body.value("code", "") : "";
  if (status >= 200 && status < 300) return Outcome::ok;
  if (type == "order" && status == 409 && code == "out_of_stock") return Outcome::ok;
  if (status == 503 && code == "busy") return Outcome::fail;  // "nothing was written"
  if (status >= 500) return Outcome::unknown;
  return Outcome::fail;
}

// Sends one recorded operation and records its outcome.
class Sender {
 public:
  Sender(const Targets& targets, std::chrono::milliseconds timeout, HistoryWriter& history,
         std::atomic<std::int64_t>& next_id)
      : history_(history), next_id_(next_id), ports_(targets.ports), timeout_(timeout) {
    for (auto port : ports_) clients_.emplace_back(new HttpClient(port, timeout));
  }

  Op send(size_t target, const std::string& type, const std::string& method,
          const std::string& path, const Json& body, const std::string& key, Json request,
          bool final_replay = false) {
    Op op;
    op.id = next_id_++;
    op.type = type;
    request["target"] = target;
    request["method"] = method;
    request["path"] = path;
    if (!body.is_null()) request["body"] = body;
    if (!key.empty()) request["key"] = key;
    op.request = std::move(request);
    op.final_replay = final_replay;
    history_.invoke(op);
    testing::Headers headers;
    if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
    const size_t t = target % clients_.size();
    HttpClient& client = *clients_[t];
    const auto verb = method == "PUT" ? testing::Method::put : testing::Method::post;
    try {
      HttpResponse res = client.request(verb, path, body.is_null() ? "{}" : body.dump(), headers);
      op.status = res.status;
      op.response = Json::parse(res.body, nullptr, false);
      if (op.response.is_discarded()) op.response = Json(res.body);
      if (res.has_header("idempotent-replayed")) op.response["_replayed"] = true;
      op.outcome = classify(type, res.status, op.response);
    } catch (const std::exception& e) {
      op.error = e.what();
      // The connection is in an unknown state: the next request starts on a new one.
      clients_[t] = std::make_unique<HttpClient>(ports_[t], timeout_);
      // Refused before anything was sent: nothing can have happened.
      op.outcome = op.error.rfind("connect failed", 0) == 0 ? Outcome::fail : Outcome::unknown;
    }
    history_.complete(op);
    return op;
  }

 private:
  HistoryWriter& history_;
  std::atomic<std::int64_t>& next_id_;
  std::vector<std::uint16_t> ports_;
  std::chrono::milliseconds timeout_;
  std::vector<std::unique_ptr<HttpClient>> clients_;
};

struct PastOrder {
  std::string key;
  Json body;
  std::string order_id;  // when placed
  std::string order_no;
};

struct PastDocument {
  std::string scope, key, title;
};

class Client {
 public:
  Client(int index, const Targets& targets, const WorkloadOptions& o, HistoryWriter& history,
         std::atomic<std::int64_t>& next_id)
      : index_(index),
        options_(o),
        targets_(targets.ports.size()),
        sender_(targets, o.request_timeout, history, next_id),
        rng_(o.seed * 1000003 + static_cast<std::uint64_t>(index)) {}

  void one() {
    const int roll = pick(0, 99);
    const size_t target = static_cast<size_t>(pick(0, static_cast<int>(targets_) - 1));
    if (roll < 34)
      order(target);
    else if (roll < 42)
      replay_order(target);
    else if (roll < 50)
      cancel(target);
    else if (roll < 74)
      document(target);
    else if (roll < 78)
      replay_document(target);
    else if (roll < 84)
      adjust(target);
    else if (roll < 90)
      source_orders(target);
    else if (roll < 97)
      run(target);
    else
      reap(target);
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  void order(size_t target) {
    Json lines = Json::array();
    const int n = pick(1, 3);
    for (int i = 0; i < n; ++i)
      lines.push_back({{"sku_id", pick(1, options_.skus)}, {"quantity", pick(1, 3)}});
    const int customer = 1 + (index_ + pick(0, 1)) % options_.customers;
    Json body = {{"customer_id", customer}, {"warehouse_id", 1}, {"lines", lines}};
    PastOrder past{fmt_key("o"), body, "", ""};
    Op op = sender_.send(target, "order", "POST", "/v1/orders", body, past.key,
                         {{"customer", customer}});
    remember_order(past, op);
    orders_.push_back(std::move(past));
  }

  void replay_order(size_t target) {
    if (orders_.empty()) return order(target);
    PastOrder& past = orders_[static_cast<size_t>(pick(0, static_cast<int>(orders_.size()) - 1))];
    Op op = sender_.send(target, "order", "POST", "/v1/orders", past.body, past.key,
                         {{"customer", past.body["customer_id"]}, {"replay", true}});
    remember_order(past, op);
  }

  static void remember_order(PastOrder& past, const Op& op) {
    if (op.status == 201 && op.response.is_object() && past.order_id.empty()) {
      past.order_id = op.response.value("order_id", "");
      past.order_no = op.response.value("order_no", "");
    }
  }

  void cancel(size_t target) {
    std::vector<const PastOrder*> placed;
    for (const auto& o : orders_)
      if (!o.order_id.empty()) placed.push_back(&o);
    if (placed.empty()) return order(target);
    const PastOrder& o = *placed[static_cast<size_t>(pick(0, static_cast<int>(placed.size()) - 1))];
    sender_.send(target, "cancel", "POST", "/v1/orders/" + o.order_id + "/cancel", Json(), "",
                 {{"order_id", o.order_id}});
  }

  void document(size_t target) {
    PastDocument d{"S" + std::to_string(pick(1, options_.scopes)), "", ""};
    if (pick(0, 1) == 0) d.key = fmt_key("d");
    d.title = "doc " + fmt_key("t");
    sender_.send(target, "document", "POST", "/v1/scopes/" + d.scope + "/documents",
                 {{"title", d.title}}, d.key, {{"scope", d.scope}, {"title", d.title}});
    if (!d.key.empty()) documents_.push_back(std::move(d));
  }

  void replay_document(size_t target) {
    if (documents_.empty()) return document(target);
    const PastDocument& d =
        documents_[static_cast<size_t>(pick(0, static_cast<int>(documents_.size()) - 1))];
    sender_.send(target, "document", "POST", "/v1/scopes/" + d.scope + "/documents",
                 {{"title", d.title}}, d.key,
                 {{"scope", d.scope}, {"title", d.title}, {"replay", true}});
  }

  void adjust(size_t target) {
    const int sku = pick(1, options_.skus);
    const int delta = pick(0, 4) == 0 ? -1 : pick(5, 20);
    const std::string reason = "adj " + fmt_key("a");
    sender_.send(target, "adjust", "POST",
                 "/v1/warehouses/1/skus/" + std::to_string(sku) + "/adjustments",
                 {{"delta", delta}, {"reason", reason}}, "",
                 {{"sku_id", sku}, {"delta", delta}, {"reason", reason}});
  }

  void source_orders(size_t target) {
    Json orders = Json::array();
    const std::string no = fmt_key("so");
    const int lots = pick(1, 3);
    for (int lot = 1; lot <= lots; ++lot)
      orders.push_back({{"site_code", "T"},
                        {"order_no", no},
                        {"lot_no", std::to_string(lot)},
                        {"quantity", lot}});
    sender_.send(target, "source_orders", "POST", "/v1/source-orders", {{"orders", orders}}, "",
                 Json::object());
    for (const auto& o : orders) sources_.push_back(o);
  }

  void run(size_t target) {
    Json orders = Json::array();
    // A few of this client's own source orders and lines of its placed orders.
    for (int i = 0; i < 3 && !sources_.empty(); ++i) {
      const Json& s = sources_[static_cast<size_t>(pick(0, static_cast<int>(sources_.size()) - 1))];
      orders.push_back(
          {{"site_code", s["site_code"]}, {"order_no", s["order_no"]}, {"lot_no", s["lot_no"]}});
    }
    for (int i = 0; i < 3 && !orders_.empty(); ++i) {
      const PastOrder& o =
          orders_[static_cast<size_t>(pick(0, static_cast<int>(orders_.size()) - 1))];
      if (!o.order_no.empty())
        orders.push_back({{"site_code", "W1"}, {"order_no", o.order_no}, {"lot_no", "1"}});
    }
    if (orders.empty()) return source_orders(target);
    sender_.send(target, "run", "POST", "/v1/schedule/runs?wait=false", {{"orders", orders}}, "",
                 Json::object());
  }

  void reap(size_t target) {
    sender_.send(target, "reap", "POST", "/v1/maintenance/reap", Json::object(), "",
                 Json::object());
  }

  std::string fmt_key(const char* prefix) {
    return std::string(prefix) + "-" + std::to_string(options_.seed) + "-" +
           std::to_string(index_) + "-" + std::to_string(counter_++);
  }

  int index_;
  const WorkloadOptions& options_;
  size_t targets_;
  Sender sender_;
  std::mt19937_64 rng_;
  std::int64_t counter_ = 0;
  std::vector<PastOrder> orders_;
  std::vector<PastDocument> documents_;
  std::vector<Json> sources_;
};

}  // namespace

bool set_up(const Targets& targets, const WorkloadOptions& o, HistoryWriter& history) {
  std::atomic<std::int64_t> ids{-1000000};  // set-up operations have negative ids
  Sender sender(targets, o.request_timeout, history, ids);
  auto ok = [&](const std::string& path, const Json& body, const std::string& type) {
    for (int attempt = 0; attempt < 20; ++attempt) {
      Op op = sender.send(0, type, "PUT", path, body, "", Json::object());
      if (op.status == 200 || op.status == 201) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return false;
  };
  for (int sku = 1; sku <= o.skus; ++sku) {
    if (!ok("/v1/warehouses/1/skus/" + std::to_string(sku),
            {{"price_cents", 100 * sku}, {"available", o.initial_stock}}, "setup_sku"))
      return false;
  }
  for (int s = 1; s <= o.scopes; ++s) {
    if (!ok("/v1/scopes/S" + std::to_string(s), {{"width", 6}, {"radix", 10}, {"max", 999999}},
            "setup_scope"))
      return false;
  }
  return true;
}

std::int64_t run_workload(const Targets& targets, const WorkloadOptions& o, HistoryWriter& history,
                          std::atomic<std::int64_t>& next_id) {
  const auto until = std::chrono::steady_clock::now() + o.duration;
  std::atomic<std::int64_t> invoked{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < o.clients; ++i) {
    threads.emplace_back([&, i] {
      Client client(i, targets, o, history, next_id);
      const auto gap = o.pace > 0 ? std::chrono::microseconds(1000000LL * o.clients / o.pace)
                                  : std::chrono::microseconds(0);
      auto next = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() < until && invoked++ < o.max_ops) {
        client.one();
        next += gap;
        std::this_thread::sleep_until(next);
      }
    });
  }
  for (auto& t : threads) t.join();
  return std::min(invoked.load(), o.max_ops);
}

bool finish(const Targets& targets, const std::string& history_path, HistoryWriter& history,
            std::atomic<std::int64_t>& next_id, const std::function<std::int64_t()>& unsettled,
            std::chrono::seconds wait) {
  // Every key that got a definite answer, once more: the answer must be the same.
  const History h = load_history(history_path);
  std::set<std::string> seen;
  std::vector<const Op*> replays;
  for (const Op& op : h.ops) {
    if (op.outcome != Outcome::ok || op.final_replay) continue;
    if (op.type != "order" && op.type != "document") continue;
    const std::string key = op.request.value("key", "");
    if (key.empty()) continue;
    if (seen.insert(op.request.value("path", "") + "|" + key + "|" + op.request["body"].dump())
            .second)
      replays.push_back(&op);
  }
  constexpr size_t kThreads = 4;
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Sender sender(targets, std::chrono::seconds(30), history, next_id);
      for (size_t i = t; i < replays.size(); i += kThreads) {
        const Op& op = *replays[i];
        Json request = op.request;
        for (const char* field : {"target", "method", "path", "body", "key"}) request.erase(field);
        sender.send(i % targets.ports.size(), op.type, "POST", op.request.value("path", ""),
                    op.request["body"], op.request.value("key", ""), request, true);
      }
    });
  }
  for (auto& t : threads) t.join();
  // Production settles: every live source order gets its production order.
  Sender sender(targets, std::chrono::seconds(30), history, next_id);
  const auto until = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < until) {
    if (unsettled() == 0) return true;
    sender.send(0, "reap", "POST", "/v1/maintenance/reap", Json::object(), "", Json::object(),
                true);
    sender.send(0, "run", "POST", "/v1/schedule/runs?wait=false", Json::object(), "",
                Json::object(), true);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return unsettled() == 0;
}

}  // namespace onceorder::torture
