// affinity_mask (affinity_mask.hpp): construction and copy, which keep a mask of more than
// 1,024 CPUs in an allocation of its own, and the read of the calling thread's mask, which
// grows the mask until the kernel's fits (sched_getaffinity fails with EINVAL while too small).
#include "platform/affinity_mask.hpp"

#include <cerrno>
#include <cstring>

namespace heist::detail {

affinity_mask::affinity_mask(std::size_t bytes) noexcept : m_bytes(bytes) {
  CPU_ZERO(&m_small);
  if (bytes > sizeof(cpu_set_t)) {
    m_large.reset(CPU_ALLOC(bytes * 8));
    if (m_large) CPU_ZERO_S(bytes, m_large.get());
  }
}

affinity_mask::affinity_mask(const affinity_mask& other) noexcept : affinity_mask(other.m_bytes) {
  if (other.m_large && !m_large) {  // out of memory: an empty mask (count() == 0) says so
    m_bytes = sizeof(cpu_set_t);
    return;
  }
  std::memcpy(set(), other.set(), m_bytes);
}

std::optional<affinity_mask> affinity_mask::of_calling_thread() noexcept {
  // Grow until the kernel accepts the size (EINVAL: its mask is larger than ours).
  for (int cpus = CPU_SETSIZE; cpus <= (1 << 20); cpus *= 2) {
    affinity_mask mask(CPU_ALLOC_SIZE(cpus));
    if (mask.m_bytes > sizeof(cpu_set_t) && !mask.m_large) return std::nullopt;
    if (sched_getaffinity(0, mask.m_bytes, mask.set()) == 0) return mask;
    if (errno != EINVAL) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace heist::detail
