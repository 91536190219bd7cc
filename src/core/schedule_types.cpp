#include "onceorder/core/schedule_types.hpp"

namespace onceorder {

std::string production_scope(std::string_view site_code) { return "PO-" + std::string(site_code); }

}  // namespace onceorder
