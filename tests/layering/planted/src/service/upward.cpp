// Planted for the layering check's own test: a service file that includes the http layer.
#include "http/router.hpp"
