#include "core/version.hpp"

#include <string>

namespace onceorder {

std::string version_line() {
  return "onceorder " + std::string(release_version()) + " (commit " + std::string(build_commit()) +
         ")";
}

}  // namespace onceorder
