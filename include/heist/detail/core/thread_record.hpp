// thread_record: the whole of what heist keeps per OS thread. Its first part, thread_context
// (thread_context.hpp), is what the inline paths of every spawn and wait read; the record adds
// the parts that only sleeping (the parker and the sleeper: sleep/) and small-object memory
// (coroutine frames, futures' states) use, so that a header with a spawn or a wait in it does
// not carry them. Only the library makes contexts (worker_loop.cpp, thread_context.cpp,
// stack_extension.cpp), and every one is a thread_record.
#pragma once

#include <cstddef>

#include "heist/detail/config.hpp"
#include "heist/detail/core/small_object_pool.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/diagnostics/analysis_hooks.hpp"
#include "heist/detail/sleep/idle_state.hpp"
#include "heist/detail/sleep/parker.hpp"

namespace heist::detail {

struct thread_record final : thread_context {
  thread_record() noexcept { m_sleeper.m_parker = &m_parker; }

  // Memory: coroutine frames and futures' states (allocate_small).
  small_object_pool m_small;

  // Sleeping (sleep/): what this thread blocks on (park.cpp, future_wait.cpp) and its entry
  // in an arena's idle lists (idle_state.hpp).
  parker m_parker;
  sleeper m_sleeper;

  // Searching (search.cpp, park.cpp, worker_loop.cpp). A restarted worker's thread: the
  // wake-up that started it already counted it as a searcher, so its first search() does not
  // count itself again (worker_threads.cpp). How long a roamer parks while polled
  // completions are pending (poller.hpp): 20 us, doubling to 1 ms while polls find nothing;
  // a busy worker's last poll.
  bool m_search_counted = false;
  std::int64_t m_poll_park_ns = 20'000;
  std::int64_t m_last_poll_ns = 0;

  // Which worker this is (worker_loop.cpp): its index, and whether it is a blocking()
  // stand-in (spare_main).
  std::size_t m_worker_index = 0;
  bool m_spare = false;

  // Its place in the DAG of a running scalability analysis (analysis_hooks.hpp).
  analysis_frame m_analysis;
};

HEIST_ALWAYS_INLINE thread_record& record_of(thread_context& c) noexcept {
  return static_cast<thread_record&>(c);
}
HEIST_ALWAYS_INLINE const thread_record& record_of(const thread_context& c) noexcept {
  return static_cast<const thread_record&>(c);
}
HEIST_ALWAYS_INLINE parker& parker_of(thread_context& c) noexcept {
  return record_of(c).m_parker;
}
HEIST_ALWAYS_INLINE sleeper& sleeper_of(thread_context& c) noexcept {
  return record_of(c).m_sleeper;
}
HEIST_ALWAYS_INLINE const sleeper& sleeper_of(const thread_context& c) noexcept {
  return record_of(c).m_sleeper;
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
    return record_of(*self).m_small.allocate(c);
  }
  return allocate_small_outside(n);
}
HEIST_ALWAYS_INLINE void deallocate_small(void* p, std::size_t n) noexcept {
  const std::size_t c = small_object_pool::class_of(n);
  thread_context* const self = t_context;
  if (HEIST_LIKELY(self != nullptr && c < small_object_pool::k_classes)) {
    record_of(*self).m_small.deallocate(p, c);
    return;
  }
  deallocate_small_outside(p, n);
}

}  // namespace heist::detail
