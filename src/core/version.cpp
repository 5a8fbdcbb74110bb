// heist::version(): the version this library was built as.
#include "heist/version.hpp"

namespace heist {

version_info version() noexcept {
  return {HEIST_VERSION_MAJOR, HEIST_VERSION_MINOR, HEIST_VERSION_PATCH, HEIST_VERSION_STRING};
}

}  // namespace heist
