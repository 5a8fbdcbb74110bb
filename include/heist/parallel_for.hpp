// parallel_for. The calling thread takes part; an exception from the body
// cancels the rest of the loop and is rethrown by the call.
#pragma once

#include <concepts>
#include <type_traits>
#include <utility>

#include "heist/blocked_range.hpp"
#include "heist/detail/loop.hpp"
#include "heist/executor.hpp"
#include "heist/partitioner.hpp"
#include "heist/task_arena.hpp"

namespace heist {

namespace detail {
template <std::integral Index, class F>
void index_for(arena& a, Index first, Index last, F& f) {
  auto body = [&f](const blocked_range<Index>& r) {
    for (Index i = r.begin(); i != r.end(); ++i)
      f(i);
  };
  auto_partitioner p;
  run_for(a, blocked_range<Index>(first, last), body, p);
}
}  // namespace detail

// f(i) for every i in [first, last); nothing if first >= last.
template <std::integral Index, class F>
void parallel_for(Index first, Index last, F&& f) {
  detail::index_for(detail::current_arena(), first, last, f);
}
template <std::integral Index, class F>
void parallel_for(executor& ex, Index first, Index last, F&& f) {
  detail::index_for(detail_impl(ex).default_arena(), first, last, f);
}

// body(subrange) over pieces of r, cut by the partitioner.
template <detail::splittable_range Range, class Body, class Partitioner = auto_partitioner>
void parallel_for(const Range& r, Body&& body, Partitioner&& p = {}) {
  detail::run_for(detail::current_arena(), r, body, p);
}
template <detail::splittable_range Range, class Body, class Partitioner = auto_partitioner>
void parallel_for(executor& ex, const Range& r, Body&& body, Partitioner&& p = {}) {
  detail::run_for(detail_impl(ex).default_arena(), r, body, p);
}

// Inside task arena `ta` (as if called from ta.execute).
template <std::integral Index, class F>
void parallel_for(task_arena& ta, Index first, Index last, F&& f) {
  ta.execute([&] { parallel_for(first, last, f); });
}
template <detail::splittable_range Range, class Body, class Partitioner = auto_partitioner>
void parallel_for(task_arena& ta, const Range& r, Body&& body, Partitioner&& p = {}) {
  ta.execute([&] { detail::run_for(detail::arena_of(ta), r, body, p); });
}

}  // namespace heist
