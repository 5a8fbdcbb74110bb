// The load monitor: per-worker counters and queue lengths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace heist {

struct worker_stats {
  std::uint64_t executed = 0;        // tasks whose body this worker ran
  std::uint64_t stolen = 0;          // tasks it took from another worker's deque
  std::uint64_t steal_attempts = 0;  // deques it tried to steal from
  std::uint64_t failed_steals = 0;   // attempts that found the deque empty or lost the race
  std::uint64_t sleeps = 0;          // times it parked its thread
  std::size_t queue_length = 0;      // tasks in its deque at the time of the snapshot
};

struct executor_stats {
  std::vector<worker_stats> workers;  // one per worker, index = worker index
  // Tasks run by threads that are not workers of the executor while they helped in a
  // wait (future::get, task_group::wait, parallel loops called from outside): their
  // counters are kept here so that executed() accounts for every task.
  worker_stats external;
  // Stand-in threads running in place of threads blocked in heist::blocking().
  std::size_t blocking_threads = 0;
  std::size_t max_queue = 0;  // over workers' queue_length
  std::size_t min_queue = 0;
  double mean_queue = 0.0;

  std::uint64_t executed() const noexcept {
    std::uint64_t n = external.executed;
    for (const auto& w : workers)
      n += w.executed;
    return n;
  }
  std::uint64_t stolen() const noexcept {
    std::uint64_t n = external.stolen;
    for (const auto& w : workers)
      n += w.stolen;
    return n;
  }
};

}  // namespace heist
