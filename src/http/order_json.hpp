// An order as API.md's answers show it (the 201 of a placement and of its replays, GET and
// cancel): the JSON text, written straight into one string. It is byte for byte what
// nlohmann's dump of the same members gives (members in sorted order, no spaces, invalid
// UTF-8 replaced), which a replay must reproduce; writing the text directly spares the hot
// path the allocations of an intermediate nlohmann object.
// order_id is a string: JavaScript loses precision above 2^53. Pure; thread-compatible.
#pragma once

#include <string>

#include "onceorder/core/order_types.hpp"

namespace onceorder::http {

std::string order_json_text(const Order& order);

}  // namespace onceorder::http
