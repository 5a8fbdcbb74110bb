// idle_budget's waits between search rounds (idle_budget.hpp).
#include "sleep/idle_budget.hpp"

#include <algorithm>
#include <chrono>

#include "heist/detail/core/arena.hpp"
#include "heist/detail/diagnostics/analysis_hooks.hpp"
#include "heist/detail/platform/cpu.hpp"

namespace heist::detail {

bool idle_budget::wait_for_next_round(const arena& a, bool contended) noexcept {
  if (contended || m_round < std::min(m_budget, k_spin_rounds)) {
    for (unsigned i = 0; i < k_pause_per_round; ++i)
      cpu_relax();
    return true;
  }
  if (!analysing() && (m_round < m_budget || lingers_for_loop(a))) {
    os_yield();
    return true;
  }
  if (m_adaptive != nullptr) *m_adaptive = std::max<std::uint32_t>(1, m_budget / 2);
  return false;
}

// From the first time a spent searcher asks while a loop runs in `a`, for k_loop_linger_ns.
bool idle_budget::lingers_for_loop(const arena& a) noexcept {
  if (m_linger_until == 0 && !a.loops_running()) return false;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  if (m_linger_until == 0) m_linger_until = now + k_loop_linger_ns;
  return now < m_linger_until;
}

}  // namespace heist::detail
