// The auto partitioner: lazy binary splitting over a range pool (loop.hpp has the overview).
#pragma once

#include "heist/detail/loops/loop_core.hpp"

namespace heist::detail {

template <class R, class Body>
void auto_for(const for_loop<Body>& loop, const R& range, std::size_t start_leaf,
              bool long_leaves = false) {
  range_pool<R> pool(range);
  leaf_sizer sizer(grain_of(range), start_leaf, long_leaves);
  while (!pool.empty()) {
    if (loop.cancelled()) return;
    if (pool.can_give(sizer.leaf(), sizer.may_be_long()) &&
        loop_demand(*loop.m_arena, sizer.long_leaves())) {
      give_piece(loop, *loop.m_ctx,
                 [&loop, piece = pool.give(), leaf = sizer.leaf(), is_long = sizer.long_leaves()] {
                   auto_for(loop, piece, leaf, is_long);
                 });
      continue;
    }
    pool.split_top_to(sizer.leaf());
    R leaf = pool.pop_top();
    timed_leaf(sizer, leaf, [&](const R& r) { (*loop.m_body)(r); });
  }
}

template <class R, class T, class Body, class Join>
T auto_reduce(const reduce_loop<T, Body, Join>& loop, const R& range, std::size_t start_leaf,
              bool long_leaves = false) {
  static constexpr std::size_t k_max_children = 64;
  T acc = *loop.m_identity;
  std::optional<T> results[k_max_children];
  std::size_t children = 0;
  alignas(64) wait_context kids(current_group(), 0, join_counting::owner);
  // Children refer to `results`: whatever happens here, wait for them before leaving. A
  // leaf's exception goes to `kids` (cancelling the children) and is rethrown by the join.
  try {
    range_pool<R> pool(range);
    leaf_sizer sizer(grain_of(range), start_leaf, long_leaves);
    while (!pool.empty() && !loop.cancelled()) {
      if (children < k_max_children && pool.can_give(sizer.leaf(), sizer.may_be_long()) &&
          loop_demand(*loop.m_arena, sizer.long_leaves())) {
        std::optional<T>* out = &results[children++];
        give_piece(
            loop, kids,
            [&loop, out, piece = pool.give(), leaf = sizer.leaf(), is_long = sizer.long_leaves()] {
              out->emplace(auto_reduce(loop, piece, leaf, is_long));
            });
        continue;
      }
      pool.split_top_to(sizer.leaf());
      R leaf = pool.pop_top();
      timed_leaf(sizer, leaf, [&](const R& r) { acc = loop.leaf(r, std::move(acc)); });
    }
  } catch (...) {
    kids.capture_exception(std::current_exception());
  }
  join_children(loop, kids);
  // Each piece given away lies left of the previous ones: join in reverse order of giving.
  for (std::size_t k = children; k-- > 0;) {
    if (!results[k]) return acc;  // skipped by a cancellation: the result is unspecified
    acc = loop.join(std::move(acc), std::move(*results[k]));
  }
  return acc;
}

}  // namespace heist::detail
