// task_arena: a strict arena with its own slots, registered with its executor so that idle
// workers visit it (search.cpp: arena_registry::to_visit; arena_visit.cpp: visit).
#include "heist/task_arena.hpp"

#include <stdexcept>
#include <string>

#include "core/executor_impl.hpp"
#include "heist/detail/sleep/backoff.hpp"

namespace heist {
namespace detail {

class task_arena_state {
 public:
  task_arena_state(std::size_t max_concurrency, executor_impl& exec, int level)
      : m_slots(std::make_unique<slot[]>(max_concurrency)),
        m_arena(exec, m_slots.get(),
                arena::layout{max_concurrency, 0, max_concurrency,
                              std::max<std::size_t>(2, max_concurrency), true,
                              exec.default_arena().idle().spreads_wakes()}) {
    for (std::size_t i = 0; i < max_concurrency; ++i) {
      m_slots[i].prepare(static_cast<std::uint32_t>(i), (i + 7) * 0x9E3779B97F4A7C15ULL,
                         exec.num_workers());
    }
    m_arena.set_level(level);
    exec.registry().add(m_arena);
  }

  ~task_arena_state() {
    // No continuation or coroutine from outside enters from now on (arena_lifetime.hpp: they
    // end with executor_closed, or resume on their completing thread). Every task of the
    // arena (enqueued ones included) runs to completion first; workers keep visiting while
    // it is registered.
    // Then it leaves the executor's list, and the executor waits for visitors still inside.
    m_arena.close_lifetime();
    for (sleep_backoff b(10); m_arena.in_flight() != 0;)
      b.pause();
    m_arena.exec().registry().remove(m_arena);
    m_arena.wait_for_injectors();
  }

  arena& get() noexcept { return m_arena; }

 private:
  std::unique_ptr<slot[]> m_slots;
  arena_record m_arena;
};

}  // namespace detail

namespace {
std::size_t checked_concurrency(std::size_t n) {
  if (n == 0 || n > detail::k_max_workers) {
    throw std::invalid_argument("heist::task_arena: max_concurrency must be between 1 and " +
                                std::to_string(detail::k_max_workers) + ", got " +
                                std::to_string(n));
  }
  return n;
}

int checked_level(priority p) {
  switch (p) {
    case priority::low:
      return detail::arena::k_low;
    case priority::normal:
      return detail::arena::k_normal;
    case priority::high:
      return detail::arena::k_high;
  }
  throw std::invalid_argument("heist::task_arena: priority must be low, normal or high, got " +
                              std::to_string(static_cast<int>(p)));
}
}  // namespace

task_arena::task_arena(std::size_t max_concurrency, executor& ex)
    : task_arena(max_concurrency, ex, priority::normal) {}

task_arena::task_arena(std::size_t max_concurrency, executor& ex, priority p)
    : m_max_concurrency(checked_concurrency(max_concurrency)),
      m_priority(p),
      m_state(std::make_unique<detail::task_arena_state>(m_max_concurrency, detail_impl(ex),
                                                         checked_level(p))),
      m_arena(&m_state->get()) {}

task_arena::~task_arena() = default;

namespace detail {
std::atomic<std::uintptr_t> g_next_isolation{1};

void reserve_isolation_tags(thread_context& c) noexcept {
  // relaxed: only uniqueness matters; the read-modify-write gives each thread a block of its
  // own (64-bit tags: 2^56 blocks before the counter could wrap).
  c.refill_tags(g_next_isolation.fetch_add(k_isolation_tag_block, std::memory_order_relaxed),
                k_isolation_tag_block);
}
}  // namespace detail

}  // namespace heist
