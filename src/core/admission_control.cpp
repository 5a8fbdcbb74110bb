// admission_control: admissions from outside an executor's tasks, and the quiescence waits
// (admission_control.hpp has the two Dekker pairs they keep).
#include "core/admission_control.hpp"

#include "core/executor_impl.hpp"
#include "heist/detail/diagnostics/perturb.hpp"

namespace heist::detail {

void admission_control::admit_external(const thread_context& c) {
  external_shard& shard = shard_for(c);
  // seq_cst RMW then seq_cst load, against close()'s seq_cst store followed by
  // wait_quiescent's count (the admission pair): either this thread sees m_closed, or
  // shutdown sees this task in flight and waits for it. Nothing accepted is lost.
  shard.created.fetch_add(1, std::memory_order_seq_cst);
  HEIST_PERTURB_POINT(admit_counted);
  if (HEIST_UNLIKELY(m_closed.load(std::memory_order_seq_cst)) && !m_exec.runs_task_of_this(c)) {
    cancel_external(c);
    throw executor_closed("heist::executor: shut down, no new tasks are accepted");
  }
}

void admission_control::cancel_external(const thread_context& c) noexcept {
  count_external_finished(c);
  note_idle();
}

void admission_control::admit_leased(slot& s) {
  // seq_cst store then seq_cst load, against close()'s seq_cst store followed by
  // wait_quiescent's fence and its read of the counters: either this thread sees m_closed,
  // or shutdown's in-flight count includes this task and waits for it.
  s.m_counters.created.bump_seq_cst();
  HEIST_PERTURB_POINT(admit_counted);
  if (HEIST_UNLIKELY(m_closed.load(std::memory_order_seq_cst))) {
    cancel_leased(s);
    throw executor_closed("heist::executor: shut down, no new tasks are accepted");
  }
}

void admission_control::cancel_leased(slot& s) noexcept {
  // The counters only grow (in_flight's argument): undo the creation by counting a finish.
  s.m_counters.finished.bump_release();
  note_idle();
}

std::uint64_t admission_control::external_finished() const noexcept {
  std::uint64_t n = 0;
  for (const external_shard& s : m_external)
    n += s.finished.load(std::memory_order_acquire);
  return n;
}

std::uint64_t admission_control::external_created() const noexcept {
  std::uint64_t n = 0;
  for (const external_shard& s : m_external)
    n += s.created.load(std::memory_order_acquire);
  return n;
}

void admission_control::check_quiescent() noexcept {
  if (m_exec.in_flight() != 0) return;
  std::lock_guard<std::mutex> lock(m_lock);
  m_cv.notify_all();
}

void admission_control::wait_quiescent() {
  // seq_cst RMW + fence: pairs with the fence in note_idle (the quiescence pair): either the
  // finishing thread sees this waiter, or this waiter's count sees its finish.
  m_waiters.fetch_add(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lock(m_lock);
    m_cv.wait(lock, [this] { return m_exec.in_flight() == 0; });
  }
  // relaxed: a late decrement only makes a finishing thread take the lock and notify once
  // more for nobody.
  m_waiters.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace heist::detail
