// parallel_reduce and parallel_deterministic_reduce.
//   body: T body(const Range&, T running)   join: T join(T, T)
// An empty range returns identity. join must be associative; it is always applied in index
// order (left, right), so it need not be commutative.
#pragma once

#include <type_traits>
#include <utility>

#include "heist/blocked_range.hpp"
#include "heist/detail/loops/loop.hpp"
#include "heist/executor.hpp"
#include "heist/partitioner.hpp"
#include "heist/task_arena.hpp"

namespace heist {

template <detail::splittable_range Range, class T, class Body, class Join,
          class Partitioner = auto_partitioner>
T parallel_reduce(const Range& r, T identity, Body&& body, Join&& join, Partitioner&& p = {}) {
  return detail::run_reduce(detail::current_arena(), r, identity, body, join, p);
}
template <detail::splittable_range Range, class T, class Body, class Join,
          class Partitioner = auto_partitioner>
T parallel_reduce(executor& ex, const Range& r, T identity, Body&& body, Join&& join,
                  Partitioner&& p = {}) {
  return detail::run_reduce(detail::default_arena_of(ex), r, identity, body, join, p);
}

// Splits the range the same way every run, whatever the number of threads (down to the
// grainsize), and joins in the same tree: floating-point results are bit-identical.
template <detail::splittable_range Range, class T, class Body, class Join>
T parallel_deterministic_reduce(const Range& r, T identity, Body&& body, Join&& join) {
  return detail::run_deterministic_reduce(detail::current_arena(), r, identity, body, join);
}
template <detail::splittable_range Range, class T, class Body, class Join>
T parallel_deterministic_reduce(executor& ex, const Range& r, T identity, Body&& body,
                                Join&& join) {
  return detail::run_deterministic_reduce(detail::default_arena_of(ex), r, identity, body, join);
}

// Inside task arena `ta` (as if called from ta.execute).
template <detail::splittable_range Range, class T, class Body, class Join,
          class Partitioner = auto_partitioner>
T parallel_reduce(task_arena& ta, const Range& r, T identity, Body&& body, Join&& join,
                  Partitioner&& p = {}) {
  return ta.execute(
      [&] { return detail::run_reduce(detail::arena_of(ta), r, identity, body, join, p); });
}
template <detail::splittable_range Range, class T, class Body, class Join>
T parallel_deterministic_reduce(task_arena& ta, const Range& r, T identity, Body&& body,
                                Join&& join) {
  return ta.execute([&] {
    return detail::run_deterministic_reduce(detail::arena_of(ta), r, identity, body, join);
  });
}

}  // namespace heist
