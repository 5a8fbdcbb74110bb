// affinity_partitioner's members that need the complete affinity_state.
#include "heist/partitioner.hpp"
#include "heist/detail/loops/loop.hpp"

namespace heist {

affinity_partitioner::affinity_partitioner() noexcept = default;
affinity_partitioner::~affinity_partitioner() = default;
affinity_partitioner::affinity_partitioner(affinity_partitioner&&) noexcept = default;
affinity_partitioner& affinity_partitioner::operator=(affinity_partitioner&&) noexcept = default;

std::size_t affinity_partitioner::last_steals() const noexcept {
  // relaxed: read after the loop returned, which joined every thread that counted.
  return m_state ? m_state->m_steals.load(std::memory_order_relaxed) : 0;
}

}  // namespace heist
