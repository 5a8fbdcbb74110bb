// parallel_for. The calling thread takes part; an exception from the body
// cancels the rest of the loop and is rethrown by the call.
#pragma once

#include <concepts>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "heist/blocked_range.hpp"
#include "heist/detail/loops/loop.hpp"
#include "heist/executor.hpp"
#include "heist/partitioner.hpp"
#include "heist/task_arena.hpp"

namespace heist {

namespace detail {

template <class P>
concept partitioner_type = std::is_same_v<std::remove_cvref_t<P>, auto_partitioner> ||
    std::is_same_v<std::remove_cvref_t<P>, simple_partitioner> ||
    std::is_same_v<std::remove_cvref_t<P>, static_partitioner> ||
    std::is_same_v<std::remove_cvref_t<P>, affinity_partitioner>;

// f(first + k * step) for every k with first + k * step < last, over a blocked_range of k.
// The arithmetic is unsigned, so ranges wider than Index's positive half do not overflow.
template <std::integral Index, class F, class Partitioner>
void index_for(arena& a, Index first, Index last, Index step, F& f, Partitioner& p) {
  if (!(step > 0)) {
    throw std::invalid_argument("heist::parallel_for: step must be positive, got " +
                                std::to_string(step));
  }
  if (!(first < last)) return;
  using U = std::make_unsigned_t<Index>;
  const U width = static_cast<U>(static_cast<U>(last) - static_cast<U>(first));
  const U ustep = static_cast<U>(step);
  const U count = width / ustep + (width % ustep != 0 ? 1 : 0);
  if (ustep == 1) {
    auto body = [&f](const blocked_range<Index>& r) {
      for (Index i = r.begin(); i != r.end(); ++i)
        f(i);
    };
    run_for(a, blocked_range<Index>(first, last), body, p);
  } else {
    auto body = [&f, first, ustep](const blocked_range<U>& r) {
      for (U k = r.begin(); k != r.end(); ++k)
        f(static_cast<Index>(static_cast<U>(static_cast<U>(first) + k * ustep)));
    };
    run_for(a, blocked_range<U>(U{0}, count), body, p);
  }
}

template <std::integral Index, class F, class Partitioner>
void index_for(arena& a, Index first, Index last, F& f, Partitioner& p) {
  index_for(a, first, last, Index{1}, f, p);
}

template <class F, class Index>
concept index_body = std::integral<Index> && std::invocable<F&, Index>;

}  // namespace detail

// f(i) for every i in [first, last); nothing if first >= last.
template <std::integral Index, detail::index_body<Index> F>
void parallel_for(Index first, Index last, F&& f) {
  auto_partitioner p;
  detail::index_for(detail::current_arena(), first, last, f, p);
}
template <std::integral Index, detail::index_body<Index> F>
void parallel_for(executor& ex, Index first, Index last, F&& f) {
  auto_partitioner p;
  detail::index_for(detail::default_arena_of(ex), first, last, f, p);
}
template <std::integral Index, detail::index_body<Index> F, detail::partitioner_type Partitioner>
void parallel_for(Index first, Index last, F&& f, Partitioner&& p) {
  detail::index_for(detail::current_arena(), first, last, f, p);
}
template <std::integral Index, detail::index_body<Index> F, detail::partitioner_type Partitioner>
void parallel_for(executor& ex, Index first, Index last, F&& f, Partitioner&& p) {
  detail::index_for(detail::default_arena_of(ex), first, last, f, p);
}

// f(first), f(first + step), ... while below last. step must be positive
// (std::invalid_argument otherwise); nothing if first >= last.
template <std::integral Index, detail::index_body<Index> F>
void parallel_for(Index first, Index last, Index step, F&& f) {
  auto_partitioner p;
  detail::index_for(detail::current_arena(), first, last, step, f, p);
}
template <std::integral Index, detail::index_body<Index> F>
void parallel_for(executor& ex, Index first, Index last, Index step, F&& f) {
  auto_partitioner p;
  detail::index_for(detail::default_arena_of(ex), first, last, step, f, p);
}
template <std::integral Index, detail::index_body<Index> F, detail::partitioner_type Partitioner>
void parallel_for(Index first, Index last, Index step, F&& f, Partitioner&& p) {
  detail::index_for(detail::current_arena(), first, last, step, f, p);
}
template <std::integral Index, detail::index_body<Index> F, detail::partitioner_type Partitioner>
void parallel_for(executor& ex, Index first, Index last, Index step, F&& f, Partitioner&& p) {
  detail::index_for(detail::default_arena_of(ex), first, last, step, f, p);
}

// body(subrange) over pieces of r, cut by the partitioner.
template <detail::splittable_range Range, class Body, class Partitioner = auto_partitioner>
void parallel_for(const Range& r, Body&& body, Partitioner&& p = {}) {
  detail::run_for(detail::current_arena(), r, body, p);
}
template <detail::splittable_range Range, class Body, class Partitioner = auto_partitioner>
void parallel_for(executor& ex, const Range& r, Body&& body, Partitioner&& p = {}) {
  detail::run_for(detail::default_arena_of(ex), r, body, p);
}

// Inside task arena `ta` (as if called from ta.execute).
template <std::integral Index, detail::index_body<Index> F>
void parallel_for(task_arena& ta, Index first, Index last, F&& f) {
  ta.execute([&] {
    auto_partitioner p;
    detail::index_for(detail::arena_of(ta), first, last, f, p);
  });
}
template <std::integral Index, detail::index_body<Index> F, detail::partitioner_type Partitioner>
void parallel_for(task_arena& ta, Index first, Index last, F&& f, Partitioner&& p) {
  ta.execute([&] { detail::index_for(detail::arena_of(ta), first, last, f, p); });
}
template <std::integral Index, detail::index_body<Index> F>
void parallel_for(task_arena& ta, Index first, Index last, Index step, F&& f) {
  ta.execute([&] {
    auto_partitioner p;
    detail::index_for(detail::arena_of(ta), first, last, step, f, p);
  });
}
template <std::integral Index, detail::index_body<Index> F, detail::partitioner_type Partitioner>
void parallel_for(task_arena& ta, Index first, Index last, Index step, F&& f, Partitioner&& p) {
  ta.execute([&] { detail::index_for(detail::arena_of(ta), first, last, step, f, p); });
}
template <detail::splittable_range Range, class Body, class Partitioner = auto_partitioner>
void parallel_for(task_arena& ta, const Range& r, Body&& body, Partitioner&& p = {}) {
  ta.execute([&] { detail::run_for(detail::arena_of(ta), r, body, p); });
}

}  // namespace heist
