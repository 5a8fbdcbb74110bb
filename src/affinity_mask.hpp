// affinity_mask: the calling thread's CPU affinity mask, of whatever size the kernel uses
// (cpu_set_t holds 1,024 CPUs; larger machines need a larger mask). Shared by sizing
// (how many CPUs may the process use) and wake placement (move off one CPU and back).
#pragma once

#include <sched.h>

#include <cstddef>
#include <memory>
#include <optional>

namespace heist::detail {

class affinity_mask {
 public:
  // The calling thread's mask; nullopt if the kernel refused (or memory ran out).
  static std::optional<affinity_mask> of_calling_thread() noexcept;

  std::size_t count() const noexcept { return CPU_COUNT_S(m_bytes, m_set.get()); }
  bool has(int cpu) const noexcept {
    return cpu >= 0 && CPU_ISSET_S(static_cast<std::size_t>(cpu), m_bytes, m_set.get());
  }
  void remove(int cpu) noexcept {
    if (cpu >= 0) CPU_CLR_S(static_cast<std::size_t>(cpu), m_bytes, m_set.get());
  }
  // Makes this the calling thread's mask; false if the kernel refused.
  bool apply() const noexcept { return sched_setaffinity(0, m_bytes, m_set.get()) == 0; }
  bool operator==(const affinity_mask& o) const noexcept;

 private:
  struct release {
    void operator()(cpu_set_t* s) const noexcept { CPU_FREE(s); }
  };
  affinity_mask(std::size_t bytes, cpu_set_t* set) noexcept : m_bytes(bytes), m_set(set) {}

  std::size_t m_bytes;
  std::unique_ptr<cpu_set_t, release> m_set;
};

}  // namespace heist::detail
