// termination_weight: weighted termination detection (credit recovery, after Mattern) for a
// dynamic set of tasks, used by task graph runs (src/compose/graph_runner.cpp) and pipelines
// (src/compose/pipeline.cpp). The set starts with k_initial held by its starter. A task that spawns
// gives the child half of what it holds (split: no shared write); a holder down to 1 first
// borrows k_borrow into the shared word. A task that ends returns what it holds (release);
// the one that takes the word to zero knows that no task of the set is running or queued.
// Invariant: the word equals the sum of what the live holders hold; every holder holds at
// least 1, so zero means no holder. One shared RMW per task instead of two (a counter raised
// per spawn and lowered per end), which on trees of small tasks is most of their cost.
#pragma once

#include <atomic>
#include <cstdint>

#include "heist/detail/config.hpp"

namespace heist::detail {

class termination_weight {
 public:
  static constexpr std::uint64_t k_initial = std::uint64_t{1} << 62;
  static constexpr std::uint64_t k_borrow = std::uint64_t{1} << 32;

  // A new round: the starter holds k_initial. relaxed: published to the tasks by the spawns
  // that hand them their parts.
  void start() noexcept { m_word.store(k_initial, std::memory_order_relaxed); }
  // No task was started after all (the start failed).
  void abandon() noexcept { m_word.store(0, std::memory_order_relaxed); }

  // The part for a child about to be spawned, taken from `held`.
  std::uint64_t split(std::uint64_t& held) noexcept {
    if (held == 1) {
      // relaxed: this holder still holds its own part, so the word cannot reach zero
      // meanwhile; the push that publishes the child and this holder's final release RMW
      // order it.
      m_word.fetch_add(k_borrow, std::memory_order_relaxed);
      held += k_borrow;
    }
    const std::uint64_t child = held / 2;
    held -= child;
    return child;
  }

  // A holder ends and returns `held`; true for the last one. acq_rel: release publishes this
  // task's effects; the acquire of the last one sees every task's (the RMWs on the word form
  // one release sequence).
  bool release(std::uint64_t held) noexcept {
    return m_word.fetch_sub(held, std::memory_order_acq_rel) == held;
  }

 private:
  alignas(k_cache_line) std::atomic<std::uint64_t> m_word{0};
};

}  // namespace heist::detail
