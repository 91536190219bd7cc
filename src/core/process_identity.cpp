#include "onceorder/core/process_identity.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <random>

namespace onceorder {

std::string process_identity() {
  char host[128] = {0};
  gethostname(host, sizeof(host) - 1);
  return fmt::format("{}:{}:{:08x}", host, getpid(),
                     static_cast<std::uint32_t>(std::mt19937(std::random_device{}())()));
}

}  // namespace onceorder
