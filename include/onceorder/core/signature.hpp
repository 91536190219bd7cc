// The signature of a delivery (docs/RECEIVING.md): every POST OnceOrder makes to an endpoint
// carries
//
//   OnceOrder-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
//
// This header is the whole signer and verifier, with nothing of OnceOrder's own: a receiver
// written in C++ may copy it and link OpenSSL's libcrypto (-lcrypto). verify_signature checks
// the HMAC in constant time and refuses a timestamp outside the tolerance window (a replay of
// an old request); a receiver still dedupes on Idempotency-Key, since OnceOrder itself may send
// an event again.
//
// Thread-safety: pure functions.
#pragma once

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace onceorder {

inline constexpr std::string_view kSignatureHeader = "OnceOrder-Signature";
// How far a receiver lets a signature's timestamp be from its own clock, by default.
inline constexpr std::int64_t kSignatureTolerance = 300;

// Hex HMAC-SHA256(secret, "<t>.<body>").
inline std::string signature_v1(std::string_view secret, std::int64_t t, std::string_view body) {
  std::string message = std::to_string(t);
  message += '.';
  message += body;
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &len);
  constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[mac[i] >> 4];
    hex += kHex[mac[i] & 15];
  }
  return hex;
}

// The header's value: "t=<t>,v1=<hex>".
inline std::string signature_header(std::string_view secret, std::int64_t t,
                                    std::string_view body) {
  return "t=" + std::to_string(t) + ",v1=" + signature_v1(secret, t, body);
}

enum class SignatureCheck {
  ok,
  malformed,  // not "t=<digits>,v1=<64 hex digits>" (more v1= entries are allowed: any may match)
  stale,      // the timestamp is outside the tolerance window
  mismatch,   // no v1 matches: another secret, or the body was changed
};

// Checks a header against the raw body as received (before any JSON parsing) at `now`.
inline SignatureCheck verify_signature(std::string_view header, std::string_view secret,
                                       std::string_view body, std::int64_t now,
                                       std::int64_t tolerance = kSignatureTolerance) {
  std::int64_t t = -1;
  bool any_v1 = false, matched = false;
  std::string expected;
  while (!header.empty()) {
    const auto comma = header.find(',');
    std::string_view part = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    if (part.starts_with("t=")) {
      const auto digits = part.substr(2);
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), t);
      if (ec != std::errc() || end != digits.data() + digits.size() || t < 0) {
        return SignatureCheck::malformed;
      }
    } else if (part.starts_with("v1=")) {
      if (t < 0) return SignatureCheck::malformed;  // t comes first
      if (expected.empty()) expected = signature_v1(secret, t, body);
      const auto given = part.substr(3);
      if (given.size() != expected.size()) return SignatureCheck::malformed;
      any_v1 = true;
      matched = matched || CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
    }
  }
  if (t < 0 || !any_v1) return SignatureCheck::malformed;
  if (t < now - tolerance || t > now + tolerance) return SignatureCheck::stale;
  return matched ? SignatureCheck::ok : SignatureCheck::mismatch;
}

}  // namespace onceorder
