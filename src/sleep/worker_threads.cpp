// worker_threads: the executor's worker threads, from their start to their retirement after
// executor_options::idle_timeout, and their restart when work arrives again.
//
// Retirement rides on the sleep protocol (idle_state.hpp) instead of adding a new one. A
// worker that parked (S1-S4: listed as a sleeping roamer, counted as sleeping) and stayed
// parked for idle_timeout:
//   R1 calls on_worker_stop (so that a later on_worker_start for the same index never
//      overlaps it), then
//   R2 under the idle lock, if it is still listed, puts its worker's placeholder (a sleeper
//      without a parker) in its place in the list; the sleeping count it added in S1 now
//      stands for the placeholder. Its thread then ends; it touches no slot again.
//      If a waker unlisted it first, a k_work signal is on its way: it consumes it, calls
//      on_worker_start again and searches as any woken worker.
//   R3 a publisher that wakes a sleeper (P4, L2, a visitor call) and picks the placeholder
//      unlists it under the lock exactly as it would a thread, turning its count into a
//      searcher's, and then (outside the lock) starts a thread for the worker's slot
//      (restart). The new thread's first search does not count itself again.
// Why nothing is lost: to publishers a placeholder is a sleeper like any other, so the
// protocol's claims hold unchanged: a publication that needs a sleeper wakes one, and waking
// a placeholder produces a searching thread for that slot, as waking a parked one would.
// Why there are never two threads on one slot: only the unlisting (under the lock) of the
// placeholder starts a thread, the placeholder is listed only by R2 of the slot's one live
// thread, which ends right after; so starts and retirements of a slot alternate.
// A retired worker's deque is empty (a worker parks only with an empty deque, and only a
// slot's owner pushes into it), so no task waits in it while no thread owns it.
#include <memory>
#include <system_error>
#include <thread>

#include "core/scheduler_internal.hpp"
#include "heist/detail/sleep/wake_placement.hpp"
#include "sleep/worker_threads.hpp"

namespace heist::detail {

void worker_main(executor_impl& exec, std::size_t index, bool restarted);  // worker_loop.cpp

void worker_threads::thread_main(std::size_t index, bool restarted,
                                 const std::shared_ptr<std::atomic<bool>>& finished,
                                 start_placement* placement) noexcept {
  // Before on_worker_start (worker_main): the user's hook may narrow the mask we restore.
  if (placement != nullptr) settle_started_worker(*placement, index);
  worker_main(m_exec, index, restarted);
  // relaxed: a count for tests and reports.
  m_live.fetch_sub(1, std::memory_order_relaxed);
  // release: pairs with the acquire in reap_exited; the thread does nothing after this but
  // return, so a join after seeing it waits only for the thread's exit.
  finished->store(true, std::memory_order_release);
}

void worker_threads::start() {
  const std::size_t n = m_exec.num_workers();
  m_placeholders = std::make_unique<retired_worker[]>(n);
  for (std::size_t i = 0; i < n; ++i) {
    m_placeholders[i].owner = this;
    m_placeholders[i].index = i;
    m_placeholders[i].m_restart = &worker_threads::restart;
  }
  try {
    // Each initial worker starts on a CPU of its own where the mask allows (wake_placement.hpp).
    const std::shared_ptr<start_placement> placement = plan_start_placement(n);
    std::lock_guard<std::mutex> lock(m_lock);
    m_threads.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      m_threads.push_back(launch(i, false, placement));
      HEIST_PERTURB_POINT(start_placing);
      if (placement) place_started_worker(*placement, i, m_threads.back().thread);
    }
  } catch (...) {
    m_exec.stop_workers();  // as shutdown: the stop flag, the wake-up, then join()
    throw;
  }
}

worker_threads::thread_entry worker_threads::launch(std::size_t index, bool restarted,
                                                    std::shared_ptr<start_placement> placement) {
  auto finished = std::make_shared<std::atomic<bool>>(false);
  // relaxed: a count (see live).
  m_live.fetch_add(1, std::memory_order_relaxed);
  try {
    // The thread holds the placement until it settled (the creator may be gone by then).
    std::thread t([this, index, restarted, finished, placement = std::move(placement)] {
      thread_main(index, restarted, finished, placement.get());
    });
    return {std::move(t), std::move(finished)};
  } catch (...) {
    // relaxed: a count (see live).
    m_live.fetch_sub(1, std::memory_order_relaxed);
    throw;
  }
}

void worker_threads::restart(sleeper& placeholder) noexcept {
  auto& r = static_cast<retired_worker&>(placeholder);
  worker_threads& self = *r.owner;
  executor_impl& exec = self.m_exec;
  HEIST_PERTURB_POINT(worker_restarting);
  std::unique_lock<std::mutex> lock(self.m_lock);
  if (self.m_closed) {
    // Shutting down: everything accepted has run, and no thread starts. The waker's unlisting
    // turned the placeholder's sleeping count into a searcher's; no thread will end that
    // search, so it ends here (L1), or it would stand in the counts for good and hide the
    // sleepers still listed (helping waiters) from publishers. L2 without the queues: as the
    // last searcher, it hands the search on to a sleeper, which looks at them itself (a
    // placeholder picked again ends here again, one fewer each time).
    lock.unlock();
    if (exec.idle().end_search(r.m_kind).needed()) exec.idle().wake_one(false);
    return;
  }
  // Old threads of retired workers that finished: join them now, so they do not pile up.
  auto& exited = self.m_exited;
  for (std::size_t k = 0; k < exited.size();) {
    // acquire: pairs with worker_thread_main's release.
    if (exited[k].finished->load(std::memory_order_acquire)) {
      exited[k].thread.join();
      exited[k] = std::move(exited.back());
      exited.pop_back();
    } else {
      ++k;
    }
  }
  try {
    thread_entry fresh = self.launch(r.index, true);
    exited.push_back(std::move(self.m_threads[r.index]));
    self.m_threads[r.index] = std::move(fresh);
  } catch (...) {
    // The OS refused a thread. The placeholder goes back to the list (a searcher again
    // becoming a sleeper, like S1), so that the next wake-up tries again; the work stays
    // queued for the threads that still run and for helping waiters.
    exec.idle().prepare_sleep(placeholder, idle_kind::roamer);
    exec.report_unhandled(std::current_exception());
  }
}

void worker_threads::join() noexcept {
  // After the stop flag: no restart starts a thread once this took them (m_closed), and a
  // restart that came first put its thread in m_threads, joined here.
  std::vector<thread_entry> threads;
  {
    std::lock_guard<std::mutex> lock(m_lock);
    m_closed = true;
    threads.swap(m_threads);
    for (thread_entry& t : m_exited)
      threads.push_back(std::move(t));
    m_exited.clear();
  }
  // Outside the lock: a thread still running may call restart, which takes it.
  for (thread_entry& t : threads) {
    if (t.thread.joinable()) t.thread.join();
  }
}

}  // namespace heist::detail
