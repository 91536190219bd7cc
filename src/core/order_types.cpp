#include "onceorder/core/order_types.hpp"

#include <string>

namespace onceorder {

std::string warehouse_site(std::int64_t warehouse_id) { return "W" + std::to_string(warehouse_id); }

OrderKey source_order_key(std::int64_t warehouse_id, const std::string& order_no, int line_no) {
  return OrderKey{warehouse_site(warehouse_id), order_no, std::to_string(line_no)};
}

}  // namespace onceorder
