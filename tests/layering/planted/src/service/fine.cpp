// Planted for the layering check's own test: a service file including a store header of the
// directory form and a core header by its directory (no report).
#include "onceorder/core/status.hpp"
#include "onceorder/store/store.hpp"
