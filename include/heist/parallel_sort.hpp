// parallel_sort: an in-place, unstable parallel quicksort with std::sort's comparator contract.
//
// A piece of more than k_sort_leaf elements is partitioned around a median-of-samples pivot
// (detail/loops/sort_partition.hpp: a block partition, free of mispredicted branches on random
// keys); the larger side becomes a task on the partitioning thread's deque, where an idle
// thread steals it, and the same thread goes on with the smaller side. Pieces of k_sort_leaf
// elements or fewer are sorted on the thread that holds them (sort_serial: quicksort steps,
// then insertion sort). Every task belongs to one group that the call waits for once, so no
// thread waits inside the recursion and the stack does not grow with it. A piece whose
// partitions keep coming out lopsided (deeper than twice log2 of the input) is heapsorted,
// which bounds the worst case to O(n log n).
//
// The comparator is shared by every thread of the sort: it is called as a const object, from
// several threads at once. An exception from it cancels the sort and is rethrown by the call;
// the range then holds its elements in an unspecified order, every one of them still there
// (each step compares before it moves: detail/loops/sort_partition.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <iterator>
#include <ranges>

#include "heist/detail/loops/loop_core.hpp"
#include "heist/detail/loops/sort_partition.hpp"
#include "heist/executor.hpp"
#include "heist/task_arena.hpp"

namespace heist {

namespace detail {

// A whole input of at most this many elements is sorted on the calling thread.
inline constexpr std::ptrdiff_t k_sort_serial_cutoff = 2048;
// Pieces of at most this many elements are leaves (sort_serial, no further task).
inline constexpr std::ptrdiff_t k_sort_leaf = 512;

template <class It, class Compare>
void sort_piece(const loop_base& loop, It first, It last, int depth, const Compare& comp) {
  while (last - first > k_sort_leaf) {
    if (loop.cancelled()) return;
    if (depth == 0) {
      heap_sort(first, last, comp);
      return;
    }
    --depth;
    const auto [left_end, right_begin] = partition_step(first, last, comp);
    It give_first = first, give_last = left_end;
    if (left_end - first < last - right_begin) {
      give_first = right_begin;
      give_last = last;
      last = left_end;
    } else {
      first = right_begin;
    }
    if (give_last - give_first > 1) {
      spawn_in(loop, *loop.m_ctx, [loop, give_first, give_last, depth, &comp] {
        sort_piece(loop, give_first, give_last, depth, comp);
      });
    }
  }
  if (last - first > 1 && !loop.cancelled()) sort_serial(first, last, depth, comp);
}

template <class It, class Compare>
void sort_in(arena& a, It first, It last, const Compare& comp) {
  const std::ptrdiff_t n = last - first;
  if (n <= k_sort_serial_cutoff) {
    sort_serial(first, last, sort_depth_budget(n), comp);
    return;
  }
  const int depth = sort_depth_budget(n);
  loop_scope scope(a, "heist::parallel_sort");
  const loop_base loop = scope.base();
  scope.run([&] { sort_piece(loop, first, last, depth, comp); });
}

// What std::sort needs of the iterator, and a comparator callable as a const object.
template <class It, class Compare>
concept sortable_with = std::random_access_iterator<It> && std::permutable<It> &&
    std::predicate<const Compare&, std::iter_reference_t<It>, std::iter_reference_t<It>>;

}  // namespace detail

// Sorts [first, last) in place (not stable) with comp, a strict weak ordering called as a const
// object from several threads at once. Below a few thousand elements it sorts on the calling
// thread. If comp throws, the call rethrows and the range holds every element, in no order.
template <std::random_access_iterator It, class Compare = std::less<>>
requires detail::sortable_with<It, Compare>
void parallel_sort(It first, It last, const Compare& comp = {}) {
  detail::sort_in(detail::current_arena(), first, last, comp);
}
template <std::random_access_iterator It, class Compare = std::less<>>
requires detail::sortable_with<It, Compare>
void parallel_sort(executor& ex, It first, It last, const Compare& comp = {}) {
  detail::sort_in(detail::default_arena_of(ex), first, last, comp);
}
// Inside task arena `ta` (as if called from ta.execute).
template <std::random_access_iterator It, class Compare = std::less<>>
requires detail::sortable_with<It, Compare>
void parallel_sort(task_arena& ta, It first, It last, const Compare& comp = {}) {
  ta.execute([&] { detail::sort_in(detail::arena_of(ta), first, last, comp); });
}

// A whole container or range: parallel_sort(v) sorts std::begin(v) .. std::end(v).
template <std::ranges::random_access_range R, class Compare = std::less<>>
requires std::ranges::common_range<R> && detail::sortable_with<std::ranges::iterator_t<R>, Compare>
void parallel_sort(R&& r, const Compare& comp = {}) {
  parallel_sort(std::ranges::begin(r), std::ranges::end(r), comp);
}
template <std::ranges::random_access_range R, class Compare = std::less<>>
requires std::ranges::common_range<R> && detail::sortable_with<std::ranges::iterator_t<R>, Compare>
void parallel_sort(executor& ex, R&& r, const Compare& comp = {}) {
  parallel_sort(ex, std::ranges::begin(r), std::ranges::end(r), comp);
}
template <std::ranges::random_access_range R, class Compare = std::less<>>
requires std::ranges::common_range<R> && detail::sortable_with<std::ranges::iterator_t<R>, Compare>
void parallel_sort(task_arena& ta, R&& r, const Compare& comp = {}) {
  parallel_sort(ta, std::ranges::begin(r), std::ranges::end(r), comp);
}

}  // namespace heist
