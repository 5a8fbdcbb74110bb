// admission_control: which tasks an executor accepts, and when it is quiescent. A task that
// enters from a thread without a slot of its arena is counted here (sharded created/finished
// counters) before it is built, and refused once shutdown closed the executor; wait_idle()
// and shutdown() sleep here until in_flight() (executor_impl, which adds every arena's slot
// counters to these) reads zero, and threads that run out of work wake them (note_idle).
//
// The two Dekker pairs it keeps:
//   admission: admit_* counts (seq_cst), then reads closed (seq_cst); close() stores closed
//     (seq_cst), then wait_quiescent counts: either the admitter sees closed and undoes its
//     count, or shutdown's count sees the task and waits for it.
//   quiescence: a finishing thread counts its finish, fences (seq_cst), reads the waiter count;
//     a waiter counts itself (seq_cst), fences, reads in_flight: either the finisher sees the
//     waiter and notifies, or the waiter's sum sees the finish.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "heist/detail/config.hpp"
#include "heist/detail/core/slot.hpp"
#include "heist/detail/core/thread_context.hpp"

namespace heist::detail {

class executor_impl;

class admission_control {
 public:
  explicit admission_control(const executor_impl& exec) noexcept : m_exec(exec) {}
  admission_control(const admission_control&) = delete;
  admission_control& operator=(const admission_control&) = delete;

  // A task is entering from a thread that holds no slot of the target arena. Counts it as in
  // flight, then throws executor_closed if shutdown began, unless the caller is running a
  // task of this executor (spawns from inside a running task are always accepted).
  void admit_external(const thread_context& c);
  // Undoes admit_external when building the task failed.
  void cancel_external(const thread_context& c) noexcept;
  // A task is entering through leased slot `s` from a thread that runs no task of this
  // executor (spawn.hpp): counts it as created on `s`, then throws executor_closed if
  // shutdown began. And its undo.
  void admit_leased(slot& s);
  void cancel_leased(slot& s) noexcept;
  // A thread without a slot finished (ran or skipped) a task admitted by admit_external.
  void count_external_finished(const thread_context& c) noexcept {
    // release: see executor_impl::in_flight.
    shard_for(c).finished.fetch_add(1, std::memory_order_release);
  }

  // Shutdown began: admissions from outside the executor's tasks are refused from now on.
  void close() noexcept {
    // seq_cst: the admission pair (file comment).
    m_closed.store(true, std::memory_order_seq_cst);
  }
  // acquire: pairs with close()'s store (admit_* have their own seq_cst pair).
  bool closed() const noexcept { return m_closed.load(std::memory_order_acquire); }

  // The shards' sums, for executor_impl::in_flight (acquire: pair with the counts' release).
  std::uint64_t external_finished() const noexcept;
  std::uint64_t external_created() const noexcept;

  // Called when a thread runs out of work: wakes wait_quiescent() callers if the executor
  // became quiescent. `fenced`: the caller ran a seq_cst fence after its last write (and only
  // read since), which serves as this one.
  void note_idle(bool fenced = false) noexcept {
    HEIST_PERTURB_POINT(quiescence_check);
    // seq_cst fence between this thread's last "finished" count and its read of the
    // waiter count; pairs with the fence in wait_quiescent (the quiescence pair).
    if (!fenced) std::atomic_thread_fence(std::memory_order_seq_cst);
    if (HEIST_UNLIKELY(m_waiters.load(std::memory_order_relaxed) != 0)) check_quiescent();
  }
  // Sleeps until executor_impl::in_flight() reads zero.
  void wait_quiescent();

 private:
  struct alignas(k_cache_line) external_shard {
    std::atomic<std::uint64_t> created{0};
    std::atomic<std::uint64_t> finished{0};
  };
  static constexpr std::size_t k_external_shards = 8;
  external_shard& shard_for(const thread_context& c) noexcept {
    return m_external[(reinterpret_cast<std::uintptr_t>(&c) / sizeof(thread_context)) %
                      k_external_shards];
  }
  void check_quiescent() noexcept;

  const executor_impl& m_exec;  // for in_flight() and the caller's "inside a task" test
  alignas(k_cache_line) std::atomic<bool> m_closed{false};
  external_shard m_external[k_external_shards];

  // wait_quiescent() sleepers.
  alignas(k_cache_line) std::atomic<std::uint32_t> m_waiters{0};
  std::mutex m_lock;
  std::condition_variable m_cv;
};

}  // namespace heist::detail
