// `onceorder demo`: a small data set to explore the API and dashboard with. Running it
// again adds nothing (fixed idempotency keys, imports only into empty scopes).
#pragma once

#include <ostream>

#include "onceorder/core/status.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder::cli {

Status load_demo(store::Database& db, std::ostream& out);

}  // namespace onceorder::cli
