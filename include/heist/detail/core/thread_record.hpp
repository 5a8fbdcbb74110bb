// thread_record: the whole of what heist keeps per OS thread. Its first part, thread_context
// (thread_context.hpp), is what the inline paths of every spawn and wait read; the record adds
// the parts that only sleeping (the parker and the sleeper: sleep/) and small-object memory
// (coroutine frames, futures' states) use, so that a header with a spawn or a wait in it does
// not carry them. Only the library makes contexts (worker_loop.cpp, thread_context.cpp,
// stack_extension.cpp), and every one is a thread_record.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "heist/detail/config.hpp"
#include "heist/detail/core/small_object_pool.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/diagnostics/analysis_hooks.hpp"
#include "heist/detail/sleep/idle_state.hpp"
#include "heist/detail/sleep/parker.hpp"

namespace heist::detail {

// The search's own state (src/core/search.cpp, src/sleep/park.cpp, src/core/worker_loop.cpp).
class search_state {
 public:
  // Timed parks of a roamer while polled completions are pending (poller.hpp): 20 us,
  // doubling to 1 ms while polls find nothing. A busy worker polls at a task boundary at most
  // every k_busy_poll_interval_ns.
  static constexpr std::int64_t k_min_poll_park_ns = 20'000;
  static constexpr std::int64_t k_max_poll_park_ns = 1'000'000;
  static constexpr std::int64_t k_busy_poll_interval_ns = 20'000;

  // A restarted worker's thread: the wake-up that started it already counted it as a
  // searcher (worker_threads.cpp, R3), so its first search() does not count itself again.
  void mark_counted_by_waker() noexcept { m_counted_by_waker = true; }
  bool counted_by_waker() const noexcept { return m_counted_by_waker; }
  bool take_counted_by_waker() noexcept { return std::exchange(m_counted_by_waker, false); }

  std::int64_t poll_park_ns() const noexcept { return m_poll_park_ns; }
  void poll_found_completions() noexcept { m_poll_park_ns = k_min_poll_park_ns; }
  void poll_park_timed_out() noexcept {
    m_poll_park_ns = std::min(2 * m_poll_park_ns, k_max_poll_park_ns);
  }

  // Whether a busy worker polls at this task boundary (`now`: steady clock, ns); a yes is
  // recorded as its last poll.
  bool busy_poll_due(std::int64_t now) noexcept {
    if (now - m_last_poll_ns < k_busy_poll_interval_ns) return false;
    m_last_poll_ns = now;
    return true;
  }

 private:
  bool m_counted_by_waker = false;
  std::int64_t m_poll_park_ns = k_min_poll_park_ns;
  std::int64_t m_last_poll_ns = 0;
};

// Which worker a thread is (src/core/worker_loop.cpp sets it; a stack extension's thread
// copies its caller's): its index (a stand-in's: past the workers'), and whether it is a
// blocking() stand-in.
class worker_number {
 public:
  void assign(std::size_t index, bool stand_in) noexcept {
    m_index = index;
    m_stand_in = stand_in;
  }
  std::size_t index() const noexcept { return m_index; }
  bool stand_in() const noexcept { return m_stand_in; }

 private:
  std::size_t m_index = 0;
  bool m_stand_in = false;
};

class thread_record final : public thread_context {
 public:
  thread_record() noexcept { m_sleeper.m_parker = &m_parker; }
  // On its own thread, always: gives the thread's frame region back (frame_region.hpp).
  HEIST_API ~thread_record();
  thread_record(const thread_record&) = delete;
  thread_record& operator=(const thread_record&) = delete;

  small_object_pool& small_objects() noexcept { return m_small; }
  parker& own_parker() noexcept { return m_parker; }
  // Its entry in an arena's idle lists: written by idle_state under its lock (idle_state.hpp).
  sleeper& own_sleeper() noexcept { return m_sleeper; }
  const sleeper& own_sleeper() const noexcept { return m_sleeper; }
  search_state& search() noexcept { return m_search; }
  worker_number& worker() noexcept { return m_worker; }
  const worker_number& worker() const noexcept { return m_worker; }
  // Its place in the DAG of a running scalability analysis: src/diagnostics/analysis.cpp's.
  analysis_frame& analysis() noexcept { return m_analysis; }

 private:
  // Memory: coroutine frames and futures' states (allocate_small).
  small_object_pool m_small;
  // Sleeping (sleep/): what this thread blocks on (park.cpp, future_wait.cpp).
  parker m_parker;
  sleeper m_sleeper;
  search_state m_search;
  worker_number m_worker;
  analysis_frame m_analysis;
};

HEIST_ALWAYS_INLINE thread_record& record_of(thread_context& c) noexcept {
  return static_cast<thread_record&>(c);
}
HEIST_ALWAYS_INLINE const thread_record& record_of(const thread_context& c) noexcept {
  return static_cast<const thread_record&>(c);
}
HEIST_ALWAYS_INLINE parker& parker_of(thread_context& c) noexcept {
  return record_of(c).own_parker();
}
HEIST_ALWAYS_INLINE sleeper& sleeper_of(thread_context& c) noexcept {
  return record_of(c).own_sleeper();
}
HEIST_ALWAYS_INLINE const sleeper& sleeper_of(const thread_context& c) noexcept {
  return record_of(c).own_sleeper();
}

// Small-object memory (small_object_pool.hpp): the calling thread's pool; bigger blocks use
// the global operator new; a thread outside heist uses the depot (src/core/small_objects.cpp).
// Blocks are 16-byte aligned. deallocate_small takes the size given to allocate_small.
HEIST_API void* allocate_small_outside(std::size_t n);
HEIST_API void deallocate_small_outside(void* p, std::size_t n) noexcept;
HEIST_ALWAYS_INLINE void* allocate_small(std::size_t n) {
  const std::size_t c = small_object_pool::class_of(n);
  thread_context* const self = t_context;
  if (HEIST_LIKELY(self != nullptr && c < small_object_pool::k_classes)) {
    return record_of(*self).small_objects().allocate(c);
  }
  return allocate_small_outside(n);
}
HEIST_ALWAYS_INLINE void deallocate_small(void* p, std::size_t n) noexcept {
  const std::size_t c = small_object_pool::class_of(n);
  thread_context* const self = t_context;
  if (HEIST_LIKELY(self != nullptr && c < small_object_pool::k_classes)) {
    record_of(*self).small_objects().deallocate(p, c);
    return;
  }
  deallocate_small_outside(p, n);
}

}  // namespace heist::detail
