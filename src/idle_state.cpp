// Slow paths of the sleep protocol; see the protocol comment in detail/idle_state.hpp.
#include "heist/detail/idle_state.hpp"

namespace heist::detail {

void idle_state::unlink(sleeper& s) noexcept {
  if (s.m_prev != nullptr) {
    s.m_prev->m_next = s.m_next;
  } else {
    m_head = s.m_next;
  }
  if (s.m_next != nullptr) s.m_next->m_prev = s.m_prev;
  s.m_prev = s.m_next = nullptr;
  s.m_listed = false;
}

bool idle_state::wake_one() noexcept {
  parker* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(m_lock);
    sleeper* s = m_head;
    if (s == nullptr) return false;
    unlink(*s);
    // The woken thread becomes a searcher now, before it runs, so that concurrent
    // publishers see a searcher and do not wake a second thread for the same work.
    // relaxed: ordered by m_lock against prepare_sleep/cancel_sleep; publishers only
    // read it as a hint (their correctness argument is about sleepers, see the header).
    m_state.fetch_sub(k_one_sleeper - k_one_searcher, std::memory_order_relaxed);
    p = s->m_parker;
  }
  // Outside the lock: the futex wake is a system call.
  p->signal(parker::k_work);
  return true;
}

void idle_state::wake_all() noexcept {
  while (wake_one()) {
  }
}

void idle_state::prepare_sleep(sleeper& me) noexcept {
  {
    std::lock_guard<std::mutex> lock(m_lock);
    me.m_prev = nullptr;
    me.m_next = m_head;
    if (m_head != nullptr) m_head->m_prev = &me;
    m_head = &me;
    me.m_listed = true;
    // S1: seq_cst RMW; with the fence below it pairs with a publisher's fence (P2).
    m_state.fetch_add(k_one_sleeper - k_one_searcher, std::memory_order_seq_cst);
  }
  // S2: orders S1 before the re-check loads of the queues (S3).
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool idle_state::cancel_sleep(sleeper& me) noexcept {
  std::lock_guard<std::mutex> lock(m_lock);
  if (!me.m_listed) return false;  // a waker took us; its k_work signal is on its way
  unlink(me);
  // relaxed: as in wake_one.
  m_state.fetch_sub(k_one_sleeper - k_one_searcher, std::memory_order_relaxed);
  return true;
}

}  // namespace heist::detail
