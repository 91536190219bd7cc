// Planted for the layering check's own test: a core file that includes a store header of the
// directory form.
#include "onceorder/store/store.hpp"
