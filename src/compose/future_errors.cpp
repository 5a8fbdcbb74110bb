// The errors futures throw, out of line so that future.hpp needs no <future>.
#include <future>

#include "heist/future.hpp"

namespace heist::detail {

void throw_no_state() {
  throw std::future_error(std::future_errc::no_state);
}

}  // namespace heist::detail
