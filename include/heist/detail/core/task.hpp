// task: the unit the scheduler moves around, a 32-byte header (what the deques, the
// injection queues and the run loops see). Almost every task is a task_block, one fixed-size
// 128-byte block from the per-thread task pool (task_pool.hpp): the header and 96 bytes of
// in-place closure storage, so spawning a lambda with up to 96 bytes of captures allocates
// nothing from the global heap. Bigger or over-aligned closures live on the heap and the
// block stores a pointer to them. The one other kind is a coroutine member's own header, in
// its frame (coroutine.hpp, frame_member): no block, no closure, and the run loops do not give
// it back to the pool (frame_task).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace heist::detail {

class wait_context;

struct task {
  // Runs the closure if `run` is true, then destroys it. Never throws: each kind of task
  // routes its exception to its group, its future or the executor's unhandled handler.
  using invoke_fn = void (*)(task* self, bool run) noexcept;

  invoke_fn m_invoke;
  // Intrusive link: the task pool's free lists (relaxed, one thread) and the injection
  // queues (a lock-free MPSC list, see injection_queue.hpp) chain blocks here; a block is
  // never in both at once.
  std::atomic<task*> m_next;
  // The task_group this task belongs to (its pending count, cancellation and first
  // exception), or nullptr for post()/submit() tasks; bit 0 set: the group's owner counted
  // it (wait_context::try_add_owned). Read through group_of / owner_counted.
  wait_context* m_group;
  // Isolation region the task was spawned in (0: none). Atomic because a thief reads it
  // speculatively before its CAS decides whether the task is really its (steal_if).
  std::atomic<std::uintptr_t> m_isolation;
};

// A task with its closure: what the task pool hands out (16-aligned: frame_task_address).
struct alignas(16) task_block : task {
  alignas(16) std::byte m_storage[96];
};

inline constexpr std::uintptr_t k_owner_counted_bit = 1;  // wait_contexts are 8-aligned
// m_group of a task that is not a block of the pool (a coroutine member's header in its
// frame): it belongs to no group as far as the run loops go, and they do not free it.
inline constexpr std::uintptr_t k_frame_task_bit = 2;
inline wait_context* group_of(const task* t) noexcept {
  return reinterpret_cast<wait_context*>(reinterpret_cast<std::uintptr_t>(t->m_group) &
                                         ~(k_owner_counted_bit | k_frame_task_bit));
}
inline bool frame_task(const task* t) noexcept {
  return (reinterpret_cast<std::uintptr_t>(t->m_group) & k_frame_task_bit) != 0;
}
// The same, told by the address alone, without reading the task: a frame's header lies at
// 8 mod 16 (coroutine.hpp, task_promise_base), a block of the pool at 0 mod 16.
inline bool frame_task_address(const task* t) noexcept {
  return (reinterpret_cast<std::uintptr_t>(t) & 15) == 8;
}
inline bool owner_counted(const task* t) noexcept {
  return (reinterpret_cast<std::uintptr_t>(t->m_group) & k_owner_counted_bit) != 0;
}
inline wait_context* tag_group(wait_context* g, bool owner_counted) noexcept {
  return reinterpret_cast<wait_context*>(reinterpret_cast<std::uintptr_t>(g) |
                                         (owner_counted ? k_owner_counted_bit : 0));
}

inline constexpr std::size_t k_task_block_size = 128;
inline constexpr std::size_t k_task_storage_size = sizeof(task_block::m_storage);
static_assert(sizeof(task) == 32);
static_assert(sizeof(task_block) == k_task_block_size);

template <class F>
inline constexpr bool k_fits_in_task = sizeof(F) <= k_task_storage_size && alignof(F) <= 16;

// The closure of a task, stored in place when it fits, else on the heap.
template <class F>
F& task_closure(task* t) noexcept {
  if constexpr (k_fits_in_task<F>) {
    return *std::launder(reinterpret_cast<F*>(static_cast<task_block*>(t)->m_storage));
  } else {
    return **std::launder(reinterpret_cast<F**>(static_cast<task_block*>(t)->m_storage));
  }
}

template <class F, class... Args>
void construct_closure(task* t, Args&&... args) {
  if constexpr (k_fits_in_task<F>) {
    ::new (static_cast<void*>(static_cast<task_block*>(t)->m_storage))
        F(std::forward<Args>(args)...);
  } else {
    F* heap = new F(std::forward<Args>(args)...);
    ::new (static_cast<void*>(static_cast<task_block*>(t)->m_storage)) F*(heap);
  }
}

template <class F>
void destroy_closure(task* t) noexcept {
  if constexpr (k_fits_in_task<F>) {
    task_closure<F>(t).~F();
  } else {
    delete &task_closure<F>(t);
  }
}

}  // namespace heist::detail
