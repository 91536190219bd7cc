// The core of a webhook receiver for OnceOrder's push delivery (docs/RECEIVING.md). It needs
// nothing of OnceOrder but include/onceorder/core/signature.hpp (copy it) and OpenSSL's libcrypto:
//
//   c++ -std=c++20 -I include docs/examples/receiver.cpp -lcrypto -o receiver
//   printf '%s' "$BODY" | ./receiver "$SECRET" "$IDEMPOTENCY_KEY" "$SIGNATURE"
//
// handle() is what a receiver's POST handler does, in this order: check the signature on the
// raw body, record the event and act on it in one transaction keyed by Idempotency-Key, and
// answer 2xx only after that transaction committed. main() hands it the same delivery twice,
// as OnceOrder may (at_least_once re-sends), and prints each answer.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <set>
#include <string>

#include "onceorder/core/signature.hpp"

namespace {

// Stands in for the receiver's database. In a real receiver record_and_act is one
// transaction (docs/RECEIVING.md, "Dedupe in your own transaction"):
//   BEGIN;
//   INSERT INTO processed_events (idempotency_key) VALUES ($1) ON CONFLICT DO NOTHING;
//   -- one row inserted: act on the event here, in this transaction
//   COMMIT;
class Store {
 public:
  // True when the event was new and acted on; false for a duplicate (acted on before).
  bool record_and_act(const std::string& key, const std::string& body) {
    if (!processed_.insert(key).second) return false;
    (void)body;  // act on the event: parse the JSON, create the job, ...
    return true;
  }

 private:
  std::set<std::string> processed_;
};

struct Answer {
  int status;
  std::string what;
};

// `raw_body` is the body exactly as received: the signature covers its bytes, so check it
// before parsing (a parser and a re-serializer may change whitespace or key order).
Answer handle(const std::string& secret, const std::string& idempotency_key,
              const std::string& signature, const std::string& raw_body, Store& store) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  switch (onceorder::verify_signature(signature, secret, raw_body, now)) {
    case onceorder::SignatureCheck::ok:
      break;
    case onceorder::SignatureCheck::malformed:
      return {400, "malformed signature header"};
    case onceorder::SignatureCheck::stale:
      return {401, "signature timestamp outside the tolerance window (a replay?)"};
    case onceorder::SignatureCheck::mismatch:
      return {401, "signature mismatch"};
  }
  if (idempotency_key.empty()) return {400, "no Idempotency-Key"};
  // Durable before the answer: a 2xx tells OnceOrder it never needs to send this again.
  if (!store.record_and_act(idempotency_key, raw_body)) return {200, "duplicate, not acted on"};
  return {200, "processed"};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: receiver SECRET IDEMPOTENCY_KEY SIGNATURE < body\n";
    return 2;
  }
  const std::string body{std::istreambuf_iterator<char>(std::cin),
                         std::istreambuf_iterator<char>()};
  Store store;
  for (int delivery = 0; delivery < 2; ++delivery) {
    const Answer a = handle(argv[1], argv[2], argv[3], body, store);
    std::cout << a.status << ' ' << a.what << '\n';
  }
  return 0;
}
