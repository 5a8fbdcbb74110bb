// affinity_mask: the calling thread's CPU affinity mask, of whatever size the kernel uses
// (cpu_set_t holds 1,024 CPUs; larger machines need a larger mask, allocated then). Shared by
// sizing (how many CPUs may the process use) and wake placement (move off one CPU and back,
// in a worker's wake-up path: no allocation up to 1,024 CPUs).
#pragma once

#include <pthread.h>
#include <sched.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace heist::detail {

class affinity_mask {
 public:
  // The calling thread's mask; nullopt if the kernel refused (or memory ran out).
  static std::optional<affinity_mask> of_calling_thread() noexcept;

  affinity_mask(const affinity_mask& other) noexcept;
  affinity_mask(affinity_mask&& other) noexcept = default;
  affinity_mask& operator=(const affinity_mask&) = delete;
  affinity_mask& operator=(affinity_mask&&) = delete;

  std::size_t count() const noexcept { return CPU_COUNT_S(m_bytes, set()); }
  bool has(int cpu) const noexcept {
    return cpu >= 0 && CPU_ISSET_S(static_cast<std::size_t>(cpu), m_bytes, set());
  }
  void remove(int cpu) noexcept {
    if (cpu >= 0) CPU_CLR_S(static_cast<std::size_t>(cpu), m_bytes, set());
  }
  // The CPUs in the mask, lowest first.
  std::vector<int> cpus() const {
    std::vector<int> out;
    for (std::size_t i = 0; i < m_bytes * 8; ++i) {
      if (CPU_ISSET_S(i, m_bytes, set())) out.push_back(static_cast<int>(i));
    }
    return out;
  }
  // Only `cpu` left in the mask.
  void keep_only(int cpu) noexcept {
    CPU_ZERO_S(m_bytes, set());
    if (cpu >= 0) CPU_SET_S(static_cast<std::size_t>(cpu), m_bytes, set());
  }
  // Makes this the calling thread's mask; false if the kernel refused.
  bool apply() const noexcept { return sched_setaffinity(0, m_bytes, set()) == 0; }
  // Makes this thread `t`'s mask; false if the kernel refused.
  bool apply_to(pthread_t t) const noexcept {
    return pthread_setaffinity_np(t, m_bytes, set()) == 0;
  }

 private:
  struct release {
    void operator()(cpu_set_t* s) const noexcept { CPU_FREE(s); }
  };
  explicit affinity_mask(std::size_t bytes) noexcept;
  cpu_set_t* set() noexcept { return m_large ? m_large.get() : &m_small; }
  const cpu_set_t* set() const noexcept { return m_large ? m_large.get() : &m_small; }

  std::size_t m_bytes;
  cpu_set_t m_small;                            // up to CPU_SETSIZE CPUs
  std::unique_ptr<cpu_set_t, release> m_large;  // beyond: CPU_ALLOC'ed
};

}  // namespace heist::detail
