// Planted for the layering check's own test: a public header no layer claims.
#pragma once
