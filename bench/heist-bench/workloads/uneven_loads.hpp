// Uneven loads: uneven task costs, a hotspot, and idle stealing, each run with stealing
// (heist), without it (heist with steal_policy::none: tasks stay where they were spawned)
// and with round-robin dealing (static assignment).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "../measure.hpp"

namespace bench {

// Heavy-tailed task costs (Pareto, alpha 1.5), fixed seed, mean about `mean_ns`, capped at
// 100x the mean so one task cannot dominate the whole run.
inline std::vector<std::int64_t> heavy_tailed_costs(std::size_t n, double mean_ns,
                                                    std::uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double alpha = 1.5;
  const double xm = mean_ns * (alpha - 1) / alpha;  // Pareto minimum for that mean
  std::vector<std::int64_t> costs(n);
  for (auto& c : costs) {
    const double x = xm / std::pow(1.0 - u(rng), 1.0 / alpha);
    c = static_cast<std::int64_t>(std::min(x, 100 * mean_ns));
  }
  return costs;
}

// Uneven load: one task spawns all the heavy-tailed tasks.
template <class B>
std::uint64_t uneven_load(const std::vector<std::int64_t>& costs) {
  std::atomic<std::uint64_t> done{0};
  B::fork_each(costs.size(), [&](std::size_t i) {
    spin_for_ns(costs[i]);
    done.fetch_add(1, std::memory_order_relaxed);
  });
  return done.load();
}

// Hotspot: 64 light tasks, one of which spawns a burst of `burst` children of `cost_ns`.
template <class B>
std::uint64_t hotspot(std::size_t burst, std::int64_t cost_ns) {
  std::atomic<std::uint64_t> done{0};
  B::fork_each(64, [&](std::size_t i) {
    if (i == 0) {
      B::fork_each(burst, [&](std::size_t) {
        spin_for_ns(cost_ns);
        done.fetch_add(1, std::memory_order_relaxed);
      });
    } else {
      spin_for_ns(cost_ns / 10);
    }
    done.fetch_add(1, std::memory_order_relaxed);
  });
  return done.load();
}

// Idle stealing: one busy task trickles out small tasks while it works; the other threads
// are idle unless they steal them.
template <class B>
std::uint64_t idle_stealing(std::size_t tasks, std::int64_t producer_gap_ns, std::int64_t task_ns) {
  std::atomic<std::uint64_t> done{0};
  // fork_each spawns everything at once; here the spawner works between spawns, so the
  // children are spawned through nested fork2 chains: spawn one, work, continue.
  struct chain {
    static void step(std::size_t left, std::int64_t gap, std::int64_t cost,
                     std::atomic<std::uint64_t>& d) {
      if (left == 0) return;
      B::fork2(
          [&] {
            spin_for_ns(cost);
            d.fetch_add(1, std::memory_order_relaxed);
          },
          [&] {
            spin_for_ns(gap);
            step(left - 1, gap, cost, d);
          });
    }
  };
  chain::step(tasks, producer_gap_ns, task_ns, done);
  return done.load();
}

}  // namespace bench
