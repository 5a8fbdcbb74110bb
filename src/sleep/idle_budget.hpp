// idle_budget: how long a thread out of work keeps searching before it parks, and how it
// waits between its search rounds. A searcher makes up to k_max_idle_rounds empty rounds:
// the first k_spin_rounds separated by a short pause, the rest by a yield. Each slot adapts
// its own budget (slot::m_idle_rounds, written only here): a search that ends in parking
// halves it, one that found work raises it by one, so a trickle of lone tasks converges to
// parking almost at once (little CPU per task) while bursty fork-join keeps spinning through
// short gaps. While a parallel loop runs in the arena, a searcher that spent its budget keeps
// yielding for up to k_loop_linger_ns before it parks (the loop's next pieces come soon).
// While a scalability analysis runs, a searcher parks after its spin rounds: a yielding
// thread would take CPU time from busy strands, which the analysis measures in wall time.
// search.cpp drives the rounds; park.cpp parks.
#pragma once

#include <cstdint>

namespace heist::detail {

class arena;

inline constexpr std::uint32_t k_spin_rounds = 2;
inline constexpr std::uint32_t k_max_idle_rounds = 6;
inline constexpr unsigned k_pause_per_round = 32;
inline constexpr std::int64_t k_loop_linger_ns = 100'000;

class idle_budget {
 public:
  // `adaptive`: the searcher's slot budget in the arena it searches (slot::m_idle_rounds),
  // or null for a thread without a slot there (it gets the whole budget every time).
  explicit idle_budget(std::uint32_t* adaptive) noexcept
      : m_adaptive(adaptive), m_budget(adaptive != nullptr ? *adaptive : k_max_idle_rounds) {}

  // The searcher found work: its slot's budget grows by one round.
  static void found_work(std::uint32_t* adaptive) noexcept {
    if (adaptive != nullptr && *adaptive < k_max_idle_rounds) ++*adaptive;
  }

  // Empty rounds since the search began or last restarted (a hint for where to look).
  std::uint32_t round() const noexcept { return m_round; }
  // The next round (the search loop's step).
  void next_round() noexcept { ++m_round; }
  // Something turned up (a visit, a poll): count the rounds from the start again.
  void restart() noexcept { m_round = 0; }

  // After an empty round in `a` (`contended`: a steal lost a race, so work is there):
  // spins or yields and returns true to search again; returns false when the budget is
  // spent (the slot's budget halves, and the caller parks).
  bool wait_for_next_round(const arena& a, bool contended) noexcept;

  // Woken from a park for new work: the whole budget again.
  void woken() noexcept {
    m_budget = k_max_idle_rounds;
    m_round = 0;
    m_linger_until = 0;
  }

 private:
  bool lingers_for_loop(const arena& a) noexcept;

  std::uint32_t* m_adaptive;
  std::uint32_t m_budget;
  std::uint32_t m_round = 0;
  std::int64_t m_linger_until = 0;
};

}  // namespace heist::detail
