// The library's version. The one place it is written: CMakeLists.txt reads it from here.
#pragma once

#include "heist/detail/config.hpp"

#define HEIST_VERSION_MAJOR 0
#define HEIST_VERSION_MINOR 3
#define HEIST_VERSION_PATCH 0
// MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons (0.3.0 -> 300).
#define HEIST_VERSION \
  (HEIST_VERSION_MAJOR * 10000 + HEIST_VERSION_MINOR * 100 + HEIST_VERSION_PATCH)
#define HEIST_VERSION_STRING "0.3.0"

namespace heist {

struct version_info {
  int major, minor, patch;
  const char* string;
};

// The version of the library linked in (HEIST_VERSION is the one of the headers compiled
// against; they differ when an application runs against a newer shared library).
HEIST_API version_info version() noexcept;

}  // namespace heist
