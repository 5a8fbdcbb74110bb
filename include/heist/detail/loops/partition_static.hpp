// The static partitioner: one contiguous block per participant, no further splitting.
#pragma once

#include "heist/detail/loops/loop_core.hpp"

namespace heist::detail {

// Cuts a blocked_range into `parts` contiguous blocks, as equal as possible.
template <class T>
heist::blocked_range<T> block_of(const heist::blocked_range<T>& whole, std::size_t parts,
                                 std::size_t k) {
  const std::size_t n = whole.size();
  return subrange(whole, n / parts * k + std::min(k, n % parts),
                  n / parts * (k + 1) + std::min(k + 1, n % parts));
}

template <class R, class Body>
void static_for(const for_loop<Body>& loop, const R& range) {
  static_assert(is_blocked_range<R>::value,
                "static_partitioner works on blocked_range (it cuts exact blocks)");
  const std::size_t parts =
      std::max<std::size_t>(1, std::min(loop_participants(*loop.m_arena), range.size()));
  for (std::size_t k = parts; k-- > 1;) {
    spawn_in(loop, *loop.m_ctx, [&loop, block = block_of(range, parts, k)] {
      if (!loop.cancelled()) (*loop.m_body)(block);
    });
  }
  (*loop.m_body)(block_of(range, parts, 0));
}

}  // namespace heist::detail
