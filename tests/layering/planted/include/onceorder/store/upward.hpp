// Planted for the layering check's own test: a public header whose directory puts it in the
// store layer, including a service header of the directory form.
#pragma once

#include "onceorder/service/intake.hpp"
