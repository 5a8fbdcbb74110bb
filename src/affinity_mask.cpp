#include "affinity_mask.hpp"

#include <cerrno>
#include <cstring>

namespace heist::detail {

std::optional<affinity_mask> affinity_mask::of_calling_thread() noexcept {
  // Grow until the kernel accepts the size (EINVAL: its mask is larger than ours).
  for (int cpus = CPU_SETSIZE; cpus <= (1 << 20); cpus *= 2) {
    const std::size_t bytes = CPU_ALLOC_SIZE(cpus);
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (set == nullptr) return std::nullopt;
    affinity_mask mask(bytes, set);
    CPU_ZERO_S(bytes, set);
    if (sched_getaffinity(0, bytes, set) == 0) return mask;
    if (errno != EINVAL) return std::nullopt;
  }
  return std::nullopt;
}

bool affinity_mask::operator==(const affinity_mask& o) const noexcept {
  return m_bytes == o.m_bytes && std::memcmp(m_set.get(), o.m_set.get(), m_bytes) == 0;
}

}  // namespace heist::detail
