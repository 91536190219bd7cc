// Planted for the layering check's own test: a core file including core only (no report).
#include "onceorder/core/status.hpp"
