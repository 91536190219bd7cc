// Signs a body as OnceOrder's deliveries are signed (onceorder/core/signature.hpp), for the test
// of the receiver examples (tests/examples/receiver_examples_test.sh):
//   sign_body SECRET [UNIX_SECONDS] < body   prints the OnceOrder-Signature header's value
#include <chrono>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <string>

#include "onceorder/core/signature.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: sign_body SECRET [UNIX_SECONDS] < body\n";
    return 2;
  }
  const std::string body{std::istreambuf_iterator<char>(std::cin),
                         std::istreambuf_iterator<char>()};
  const std::int64_t t = argc == 3 ? std::stoll(argv[2])
                                   : std::chrono::duration_cast<std::chrono::seconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count();
  std::cout << onceorder::signature_header(argv[1], t, body) << '\n';
  return 0;
}
