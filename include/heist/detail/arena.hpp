// arena: a scheduling domain. Its slots hold the deques of the threads that run its tasks,
// and its injection queue receives tasks from threads that hold none of its slots. Every
// executor has one arena covering its workers; task_arena adds more over the same threads.
#pragma once

#include <cstddef>

#include "heist/detail/injection_queue.hpp"
#include "heist/detail/slot.hpp"

namespace heist::detail {

class executor_impl;

class arena {
 public:
  arena(executor_impl& exec, slot* slots, std::size_t num_slots, std::size_t inject_buckets)
      : m_exec(exec), m_slots(slots), m_num_slots(num_slots), m_inject(inject_buckets) {}
  arena(const arena&) = delete;
  arena& operator=(const arena&) = delete;

  executor_impl& exec() const noexcept { return m_exec; }
  slot& slot_at(std::size_t i) const noexcept { return m_slots[i]; }
  std::size_t num_slots() const noexcept { return m_num_slots; }
  injection_queue& inject() noexcept { return m_inject; }

  // Any queued task visible in this arena (the sleep protocol's re-check, S3).
  bool has_visible_work() const noexcept {
    if (m_inject.size() != 0) return true;
    for (std::size_t i = 0; i < m_num_slots; ++i) {
      if (!m_slots[i].m_deque.empty()) return true;
    }
    return false;
  }

 private:
  executor_impl& m_exec;
  slot* m_slots;
  std::size_t m_num_slots;
  injection_queue m_inject;
};

}  // namespace heist::detail
