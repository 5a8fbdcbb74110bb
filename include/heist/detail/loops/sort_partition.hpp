// The sequential steps of parallel_sort (parallel_sort.hpp): choosing a pivot, partitioning a
// piece around it, and sorting a leaf.
//
// Exceptions: every step compares before it moves. A comparison never runs while an element is
// held outside the range (the way std::sort's insertion sort holds one), so a comparator that
// throws leaves the range a permutation of its input: no element lost, none duplicated.
//
// The partition is block-based (after Edelkamp and Weiss, "BlockQuicksort: How Branch
// Mispredictions don't affect Quicksort", 2016): instead of branching on every comparison, it
// compares a block of elements from each end and records the positions of the misplaced ones
// with a branch-free store (`offsets[n] = i; n += misplaced;`), then swaps them in pairs. On
// random keys a classic Hoare partition mispredicts about every other comparison; this loop's
// only branches are the loop bounds. What the blocks leave at the middle (fewer than two
// blocks) is partitioned the classic way.
//
// Equal keys: the pivot is the median of three (of nine for larger pieces) sampled elements, so
// a piece whose pivot is its smallest key puts nothing left of it; then the keys equal to the
// pivot are split off at once (elements x with !comp(pivot, x)), which keeps inputs with few
// distinct keys at O(n log d) instead of degrading towards O(n^2).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <iterator>
#include <utility>

namespace heist::detail {

// Sorts the three elements at a, b, c so that !comp(*b, *a) and !comp(*c, *b).
template <class It, class Compare>
void order_three(It a, It b, It c, const Compare& comp) {
  if (comp(*b, *a)) std::iter_swap(a, b);
  if (comp(*c, *b)) {
    std::iter_swap(b, c);
    if (comp(*b, *a)) std::iter_swap(a, b);
  }
}

// Moves a median-of-samples pivot to *first: of three elements for small pieces, of three
// medians of three (Tukey's ninther) for pieces of more than 128 elements.
template <class It, class Compare>
void select_pivot(It first, It last, const Compare& comp) {
  using D = std::iter_difference_t<It>;
  const D n = last - first;
  const D half = n / 2;
  It mid = first + half;
  if (n > 128) {
    const D eighth = n / 8;
    order_three(first, first + eighth, first + 2 * eighth, comp);
    order_three(mid - eighth, mid, mid + eighth, comp);
    order_three(last - 1 - 2 * eighth, last - 1 - eighth, last - 1, comp);
    order_three(first + eighth, mid, last - 1 - eighth, comp);
  } else {
    order_three(first, mid, last - 1, comp);
  }
  std::iter_swap(first, mid);
}

// Reorders [lo, hi) so that the elements for which goes_left(x) holds come first; returns
// the first element for which it does not. goes_left is called once per element in the
// block loop and at most twice in the tail.
template <class It, class GoesLeft>
It block_partition(It lo, It hi, const GoesLeft& goes_left) {
  constexpr int block = 64;
  unsigned char left_at[block];   // offsets from lo of left-block elements that belong right
  unsigned char right_at[block];  // offsets back from hi - 1 of right-block ones that belong left
  int left_count = 0, left_start = 0;
  int right_count = 0, right_start = 0;
  while (hi - lo > 2 * block) {
    if (left_count == 0) {
      left_start = 0;
      for (int i = 0; i < block; ++i) {
        left_at[left_count] = static_cast<unsigned char>(i);
        left_count += !goes_left(lo[i]);
      }
    }
    if (right_count == 0) {
      right_start = 0;
      for (int i = 0; i < block; ++i) {
        right_at[right_count] = static_cast<unsigned char>(i);
        right_count += goes_left(*(hi - 1 - i));
      }
    }
    const int pairs = std::min(left_count, right_count);
    for (int k = 0; k < pairs; ++k) {
      std::iter_swap(lo + left_at[left_start + k], hi - 1 - right_at[right_start + k]);
    }
    left_count -= pairs;
    right_count -= pairs;
    left_start += pairs;
    right_start += pairs;
    // A block with no misplaced element left is done: everything in it is on its side.
    if (left_count == 0) lo += block;
    if (right_count == 0) hi -= block;
  }
  // Fewer than two blocks left, some elements possibly still misplaced: a classic pass.
  for (;;) {
    while (lo != hi && goes_left(*lo))
      ++lo;
    while (lo != hi && !goes_left(*(hi - 1)))
      --hi;
    if (hi - lo < 2) return lo;
    std::iter_swap(lo, hi - 1);
    ++lo;
    --hi;
  }
}

// One quicksort step on [first, last) (at least 3 elements): returns [left_end, right_begin)
// such that every element of [first, left_end) is less than every element of
// [right_begin, last) and the elements between are in their final places.
template <class It, class Compare>
std::pair<It, It> partition_step(It first, It last, const Compare& comp) {
  select_pivot(first, last, comp);
  const auto& pivot = *first;
  It mid = block_partition(first + 1, last, [&](const auto& x) { return comp(x, pivot); });
  It pivot_at = mid - 1;
  std::iter_swap(first, pivot_at);
  if (pivot_at == first) {
    // Nothing is less than the pivot: split off the keys equal to it as well.
    const auto& p = *pivot_at;
    It equal_end = block_partition(mid, last, [&](const auto& x) { return !comp(p, x); });
    return {first, equal_end};
  }
  return {pivot_at, mid};
}

// Insertion sort that finds each element's place by comparing it where it stands, then
// rotates it there (moves only).
template <class It, class Compare>
void insertion_sort(It first, It last, const Compare& comp) {
  if (last - first < 2) return;
  for (It i = first + 1; i != last; ++i) {
    if (!comp(*i, *(i - 1))) continue;
    It to = i - 1;
    while (to != first && comp(*i, *(to - 1)))
      --to;
    std::rotate(to, i, i + 1);
  }
}

// Heapsort by swaps (a sift-down compares a parent with its larger child, then swaps them):
// the O(n log n) bound for pieces that partition badly.
template <class It, class Compare>
void heap_sort(It first, It last, const Compare& comp) {
  using D = std::iter_difference_t<It>;
  const auto sift_down = [&](D at, D size) {
    for (;;) {
      D child = 2 * at + 1;
      if (child >= size) return;
      if (child + 1 < size && comp(first[child], first[child + 1])) ++child;
      if (!comp(first[at], first[child])) return;
      std::iter_swap(first + at, first + child);
      at = child;
    }
  };
  const D n = last - first;
  for (D at = n / 2; at-- > 0;)
    sift_down(at, n);
  for (D end = n - 1; end > 0; --end) {
    std::iter_swap(first, first + end);
    sift_down(0, end);
  }
}

// Pieces of at most this many elements are insertion-sorted.
inline constexpr std::ptrdiff_t k_insertion_sort_max = 16;

// Sorts [first, last) on the calling thread: quicksort steps down to small pieces, the smaller
// side by recursion and the larger by iteration; after depth_budget uneven steps, heapsort.
template <class It, class Compare>
void sort_serial(It first, It last, int depth_budget, const Compare& comp) {
  while (last - first > k_insertion_sort_max) {
    if (depth_budget-- == 0) {
      heap_sort(first, last, comp);
      return;
    }
    const auto [left_end, right_begin] = partition_step(first, last, comp);
    if (left_end - first < last - right_begin) {
      sort_serial(first, left_end, depth_budget, comp);
      first = right_begin;
    } else {
      sort_serial(right_begin, last, depth_budget, comp);
      last = left_end;
    }
  }
  insertion_sort(first, last, comp);
}

// The depth budget sort_serial and parallel_sort give an input of n elements: twice log2 n.
inline int sort_depth_budget(std::ptrdiff_t n) {
  return 2 * static_cast<int>(std::bit_width(static_cast<std::size_t>(n)));
}

}  // namespace heist::detail
