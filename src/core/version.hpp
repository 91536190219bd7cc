// The release and the git commit this binary was built from (`onceorder --version`, `/readyz`).
// Both are fixed when the program is built: the release is CMake's project version, the commit
// is read from the source tree's git checkout at build time (cmake/version.cmake), "unknown"
// when the tree is not a checkout, with "-dirty" when it had uncommitted changes.
//
// Thread-safety: constants.
#pragma once

#include <string>
#include <string_view>

namespace onceorder {

std::string_view release_version();
std::string_view build_commit();
// "onceorder RELEASE (commit COMMIT)": what `onceorder --version` prints.
std::string version_line();

}  // namespace onceorder
