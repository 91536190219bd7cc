// Planted for the layering check's own test: a public header outside a layer directory.
#pragma once
