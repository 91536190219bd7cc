// Planted for the layering check's own test: a store header that includes a service header.
#pragma once

#include "onceorder/service/intake.hpp"
