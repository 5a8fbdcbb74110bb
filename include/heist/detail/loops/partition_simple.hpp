// The simple partitioner: recursive halving to the grainsize, every right half a task; for
// reductions the fixed split tree (also deterministic_reduce).
#pragma once

#include "heist/detail/loops/loop_core.hpp"

namespace heist::detail {

template <class R, class Body>
void simple_for(const for_loop<Body>& loop, R range) {
  while (range.is_divisible()) {
    spawn_in(loop, *loop.m_ctx,
             [&loop, right = R(range, heist::split{})] { simple_for(loop, right); });
  }
  if (!loop.cancelled()) (*loop.m_body)(range);
}

// The fixed split tree (simple partitioner, deterministic reduce): split while divisible,
// right halves as tasks, join(left, right) at every node.
template <class R, class T, class Body, class Join>
T tree_reduce(const reduce_loop<T, Body, Join>& loop, R range) {
  if (loop.cancelled()) return *loop.m_identity;
  if (!range.is_divisible()) return loop.leaf(range, *loop.m_identity);
  R right(range, heist::split{});
  std::optional<T> right_result;
  alignas(64) wait_context kids(current_group(), 0, join_counting::owner);
  spawn_in(loop, kids,
           [&loop, &right, &right_result] { right_result.emplace(tree_reduce(loop, right)); });
  // The child refers to `right` and `right_result`: wait for it even if the left side throws.
  std::optional<T> left;
  try {
    left.emplace(tree_reduce(loop, std::move(range)));
  } catch (...) {
    kids.capture_exception(std::current_exception());
  }
  join_children(loop, kids);
  if (!right_result) return std::move(*left);  // the right side was cancelled
  return loop.join(std::move(*left), std::move(*right_result));
}

}  // namespace heist::detail
