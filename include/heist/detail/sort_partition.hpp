// The sequential steps of parallel_sort (parallel_sort.hpp): choosing a pivot and
// partitioning a piece around it.
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

}  // namespace heist::detail
