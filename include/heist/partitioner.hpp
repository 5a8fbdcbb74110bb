// Partitioners: how a parallel loop cuts its range into tasks.
#pragma once

#include <cstddef>
#include <memory>

#include "heist/detail/config.hpp"

namespace heist {

namespace detail {
struct affinity_state;
struct affinity_access;
}  // namespace detail

// The default: lazy, adaptive splitting. A loop task runs its range leaf by leaf (leaf sizes
// adapt to how long iterations take) and splits off the upper half of what is left only when
// another thread is idle and its own deque is empty. Balanced loops pay a handful of body
// calls; imbalanced loops keep splitting where the work is.
struct auto_partitioner {};

// Recursive halving down to the range's grainsize, every piece a task.
struct simple_partitioner {};

// One contiguous block per participating thread (the executor's workers, plus the calling
// thread if it is not one of them); no further splitting and no rebalancing.
struct static_partitioner {};

// Loop affinity scheduling: every participating thread owns an equal
// contiguous share of the iterations, kept in its own chunk queue; it runs its own chunks
// first, front to back, then takes chunks from the back of the share with the most
// iterations left. Chunk sizes adapt to iteration cost. Reusing the same object across calls
// over the same range gives each worker the same share again, so its data stays in its cache.
// One object must not be used by two loops at the same time.
class HEIST_API affinity_partitioner {
 public:
  affinity_partitioner() noexcept;
  ~affinity_partitioner();
  affinity_partitioner(affinity_partitioner&&) noexcept;
  affinity_partitioner& operator=(affinity_partitioner&&) noexcept;
  affinity_partitioner(const affinity_partitioner&) = delete;
  affinity_partitioner& operator=(const affinity_partitioner&) = delete;

  // Halves the last loop moved from one thread's share to another's (0 before the first loop).
  std::size_t last_steals() const noexcept;

 private:
  friend struct detail::affinity_access;
  std::unique_ptr<detail::affinity_state> m_state;
};

}  // namespace heist
