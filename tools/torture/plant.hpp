// Shows that each of the checker's checks can fail: it copies a clean SQLite run (its
// database and history), plants in each copy the violation a real bug would leave (an
// acknowledged order lost, a partial order, a gap in numbers, stock changed without the
// ledger, a replay answered otherwise, an event a receiver never got or acted on twice, a feed
// page that repeats an event…) and runs the checker, which must name that check.
// The seeds' naive designs, run for real, are the other half (scripts/torture).
#pragma once

#include <filesystem>
#include <string>

namespace onceorder::torture {

// 0 when every planted violation was reported by its check.
int plant(const std::filesystem::path& clean_run, const std::string& onceorder_bin);

}  // namespace onceorder::torture
