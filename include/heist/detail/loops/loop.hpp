// The engine behind parallel_for / parallel_reduce: how each partitioner cuts a range into
// tasks. docs/design/loops-arenas.md ("Parallel loops") explains the choices; in short:
//
//  auto     Lazy binary splitting with a range pool (after oneTBB's auto_partitioner and
//           Tzannes et al.'s LBS). A task keeps its range in a small stack of halves, runs the
//           leftmost piece leaf by leaf, and before each leaf, while its own deque holds
//           fewer pieces than the arena has idle threads (and always when it is empty),
//           pushes the rightmost (largest) piece there as a new task, for a thread that
//           turns idle to steal at once (loop_demand). Leaf sizes adapt to time
//           (leaf_sizer), so cheap iterations run in long leaves and the deque is refilled
//           often.
//  simple   Recursive halving to the grainsize; every right half is a task.
//  static   One contiguous block per participant, no further splitting.
//  affinity per-participant shares in chunk queues; own chunks front to
//           back, then chunks from the back of the share with the most iterations left.
//  deterministic reduce: the simple partitioner's fixed split tree, joined in tree order,
//           so results are bit-identical whatever the thread count.
//
// Reductions join results in index order: a task that gives pieces away joins their results
// in reverse order of giving (each piece given is to the left of the previous ones).
//
// Files: loop_core.hpp (shared), partition_auto.hpp, partition_simple.hpp,
// partition_static.hpp, partition_affinity.hpp; this one dispatches on the partitioner.
#pragma once

#include <algorithm>
#include <optional>
#include <type_traits>

#include "heist/detail/loops/loop_core.hpp"
#include "heist/detail/loops/partition_affinity.hpp"
#include "heist/detail/loops/partition_auto.hpp"
#include "heist/detail/loops/partition_simple.hpp"
#include "heist/detail/loops/partition_static.hpp"

namespace heist::detail {

template <class R, class Body, class Partitioner>
void run_for(arena& a, const R& range, const Body& body, Partitioner& p) {
  static_assert(std::is_invocable_v<const Body&, const R&>,
                "parallel_for: the body must be callable as body(const Range&) const");
  if (range.empty()) return;
  using P = std::remove_cvref_t<Partitioner>;
  loop_scope scope(a, "heist::parallel_for");
  const for_loop<Body> loop{scope.base(), &body};
  if constexpr (std::is_same_v<P, heist::simple_partitioner>) {
    scope.run([&] { simple_for(loop, range); });
  } else if constexpr (std::is_same_v<P, heist::static_partitioner>) {
    scope.run([&] { static_for(loop, range); });
  } else if constexpr (std::is_same_v<P, heist::affinity_partitioner>) {
    static_assert(is_blocked_range<R>::value,
                  "affinity_partitioner works on blocked_range (its shares are index ranges)");
    affinity_state& st = affinity_access::state(p);
    st.layout(loop_participants(a), range.size());
    auto run = [&](std::size_t lo, std::size_t hi) { body(subrange(range, lo, hi)); };
    scope.run([&] { affinity_start(loop, st, range.grainsize(), run); });
  } else {
    static_assert(std::is_same_v<P, heist::auto_partitioner>, "unknown partitioner");
    scope.run([&] { auto_for(loop, range, grain_of(range)); });
  }
}

template <class R, class T, class Body, class Join, class Partitioner>
T run_reduce(arena& a, const R& range, const T& identity, const Body& body, const Join& join,
             Partitioner& p) {
  static_assert(std::is_invocable_r_v<T, const Body&, const R&, T>,
                "parallel_reduce: the body must be callable as T body(const Range&, T) const");
  static_assert(std::is_invocable_r_v<T, const Join&, T, T>,
                "parallel_reduce: join must be callable as T join(T, T) const");
  if (range.empty()) return identity;
  using P = std::remove_cvref_t<Partitioner>;
  std::optional<T> result;
  loop_scope scope(a, "heist::parallel_reduce");
  const reduce_loop<T, Body, Join> loop{scope.base(), &identity, &body, &join};
  if constexpr (std::is_same_v<P, heist::simple_partitioner>) {
    scope.run([&] { result.emplace(tree_reduce(loop, range)); });
  } else if constexpr (std::is_same_v<P, heist::static_partitioner> ||
                       std::is_same_v<P, heist::affinity_partitioner>) {
    static_assert(is_blocked_range<R>::value,
                  "static and affinity partitioners work on blocked_range");
    offset_results<T> parts;
    auto run = [&](std::size_t lo, std::size_t hi) {
      parts.add(lo, loop.leaf(subrange(range, lo, hi), identity));
    };
    if constexpr (std::is_same_v<P, heist::static_partitioner>) {
      const std::size_t n = std::max<std::size_t>(1, std::min(loop_participants(a), range.size()));
      auto block = [&](std::size_t k) {
        const std::size_t size = range.size();
        run(size / n * k + std::min(k, size % n), size / n * (k + 1) + std::min(k + 1, size % n));
      };
      scope.run([&] {
        for (std::size_t k = n; k-- > 1;) {
          spawn_in(loop, *loop.m_ctx, [&loop, &block, k] {
            if (!loop.cancelled()) block(k);
          });
        }
        block(0);
      });
    } else {
      affinity_state& st = affinity_access::state(p);
      st.layout(loop_participants(a), range.size());
      scope.run([&] { affinity_start(loop, st, range.grainsize(), run); });
    }
    return parts.fold(identity, join);
  } else {
    static_assert(std::is_same_v<P, heist::auto_partitioner>, "unknown partitioner");
    scope.run([&] { result.emplace(auto_reduce(loop, range, grain_of(range))); });
  }
  return std::move(*result);
}

template <class R, class T, class Body, class Join>
T run_deterministic_reduce(arena& a, const R& range, const T& identity, const Body& body,
                           const Join& join) {
  heist::simple_partitioner p;
  return run_reduce(a, range, identity, body, join, p);
}

}  // namespace heist::detail
