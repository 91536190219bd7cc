// Planted for the layering check's own test: a core header by its directory, including a flat
// core header (no report).
#pragma once

#include "onceorder/core/status.hpp"
