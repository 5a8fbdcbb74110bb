// worker_threads: an executor's worker threads, from their start to their retirement after
// executor_options::idle_timeout and their restart when work arrives again. How retirement
// rides on the sleep protocol (R1-R3) is in worker_threads.cpp; a worker's loop is
// worker_main (worker_loop.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "heist/detail/sleep/idle_state.hpp"

namespace heist::detail {

class executor_impl;
class start_placement;  // wake_placement.hpp

class worker_threads {
 public:
  // `idle_timeout_ns`: 0, workers never retire.
  worker_threads(executor_impl& exec, std::int64_t idle_timeout_ns) noexcept
      : m_exec(exec), m_idle_timeout_ns(idle_timeout_ns) {}
  worker_threads(const worker_threads&) = delete;
  worker_threads& operator=(const worker_threads&) = delete;

  // Starts one thread per worker, each on a CPU of its own where the mask allows. On a
  // failure the threads already started are stopped and joined, and the error is rethrown.
  void start();
  // Joins every thread (after the executor's stop flag and wake-up): from now on no retired
  // worker restarts.
  void join() noexcept;

  std::int64_t idle_timeout_ns() const noexcept { return m_idle_timeout_ns; }
  // The parker-less entry that stands in the sleeper list for worker `index` while its
  // thread is gone (idle_state::retire); waking it starts a thread for the worker again.
  sleeper& retired_placeholder(std::size_t index) noexcept { return m_placeholders[index]; }
  // Worker threads alive now (retired ones excluded), for the tests and the monitor.
  std::size_t live() const noexcept {
    // relaxed: a count for the tests and the monitor; nothing is decided on it.
    return m_live.load(std::memory_order_relaxed);
  }

 private:
  struct thread_entry {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;  // set by the thread as its last step
  };
  struct retired_worker : sleeper {
    worker_threads* owner = nullptr;
    std::size_t index = 0;
  };
  // `placement`: the initial workers' CPUs (wake_placement.hpp), null for restarts.
  thread_entry launch(std::size_t index, bool restarted,
                      std::shared_ptr<start_placement> placement = nullptr);
  static void restart(sleeper& placeholder) noexcept;
  void thread_main(std::size_t index, bool restarted,
                   const std::shared_ptr<std::atomic<bool>>& finished,
                   start_placement* placement) noexcept;

  executor_impl& m_exec;
  const std::int64_t m_idle_timeout_ns;
  std::unique_ptr<retired_worker[]> m_placeholders;
  std::atomic<std::size_t> m_live{0};
  // m_threads[i] runs (or ran) worker i; a retired worker's old thread moves to m_exited
  // when a new one starts, and is joined once it says it finished (or at shutdown). Guarded
  // by m_lock, which restart takes from wake paths: nothing that holds it waits for another
  // heist lock.
  std::mutex m_lock;
  bool m_closed = false;  // join() took the threads; no restart (m_lock)
  std::vector<thread_entry> m_threads;
  std::vector<thread_entry> m_exited;
};

}  // namespace heist::detail
