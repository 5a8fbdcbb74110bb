// Slow paths of the sleep protocol; see the protocol comment in detail/sleep/idle_state.hpp.
#include "heist/detail/sleep/idle_state.hpp"

#include <cassert>
#include <mutex>

#include "heist/detail/diagnostics/perturb.hpp"
#include "heist/detail/platform/topology.hpp"
#include "heist/detail/sleep/wake_placement.hpp"

namespace heist::detail {

void idle_state::check_invariants() const noexcept {
#ifndef NDEBUG
  // Under m_lock. Sleepers listed = sleepers counted (per word), and roamers are a subset.
  std::uint32_t roamers = 0, helpers = 0;
  for (const sleeper* s = m_roamers; s != nullptr; s = s->m_next)
    ++roamers;
  for (const sleeper* s = m_helpers; s != nullptr; s = s->m_next)
    ++helpers;
  // relaxed: the sleeper fields change only under m_lock, which this holds (the searcher
  // fields may move, and are not checked here).
  const std::uint64_t all = m_state.load(std::memory_order_relaxed);
  const std::uint64_t roam = m_roaming.load(std::memory_order_relaxed);
  assert(sleeping(all) == roamers + helpers && "sleepers listed = sleepers counted");
  assert(sleeping(roam) == roamers && "roaming sleepers listed = counted");
#endif
}

void idle_state::unlink(sleeper& s) noexcept {
  if (s.m_prev != nullptr) {
    s.m_prev->m_next = s.m_next;
  } else {
    head(s.m_kind) = s.m_next;
  }
  if (s.m_next != nullptr) s.m_next->m_prev = s.m_prev;
  s.m_prev = s.m_next = nullptr;
  s.m_listed = false;
}

void idle_state::sleeper_to_searcher(sleeper& s) noexcept {
  assert(s.m_listed && "only a listed sleeper is woken or withdrawn");
  unlink(s);
  // relaxed: ordered by m_lock against prepare_sleep/cancel_sleep; publishers only read the
  // words as a hint (their correctness argument is about sleepers, see the header).
  m_state.fetch_sub(k_one_sleeper - k_one_searcher, std::memory_order_relaxed);
  if (roams(s.m_kind)) {
    m_roaming.fetch_sub(k_one_sleeper - k_one_searcher, std::memory_order_relaxed);
  }
  check_invariants();
}

bool idle_state::wake_one(bool roamer_only, bool waker_runs_on) noexcept {
  sleeper* s = nullptr;
  parker* p = nullptr;
  // Several cache domains: prefer a sleeper near the caller (topology.hpp). A waker that runs
  // on keeps the woken thread off its CPU (wake_placement.hpp). Both need the caller's CPU:
  // one sched_getcpu, before the lock.
  const bool near = multi_domain();
  const bool spread = waker_runs_on && m_spread_wakes;
  const int cpu = near || spread ? current_cpu() : -1;
  const std::uint32_t mine = near ? machine_topology().domain_of(cpu) : 0;
  const int waker_cpu = spread ? cpu : -1;
  {
    std::lock_guard<os_mutex> lock(m_lock);
    s = m_roamers;
    if (s == nullptr && !roamer_only) s = m_helpers;
    if (s == nullptr) return false;
    if (near) s = nearest_sleeper(s, mine, k_near_scan);
    // The woken thread becomes a searcher now, before it runs, so that concurrent
    // publishers see a searcher and do not wake a second thread for the same work.
    sleeper_to_searcher(*s);
    s->m_waker_cpu = waker_cpu;  // published to the woken thread by the signal (release)
    p = s->m_parker;
  }
  HEIST_PERTURB_POINT(wake_unlinked);
  // Outside the lock: the futex wake is a system call, a thread start more. A placeholder
  // was unlisted by us alone: nobody else can restart the same worker.
  if (p == nullptr) {
    s->m_restart(*s);
    return true;
  }
  p->signal(parker::k_work);
  if (waker_cpu >= 0) {
    HEIST_PERTURB_POINT(waker_yielding);
    // If the OS queued the woken thread behind us, it runs now (and steps off); if not, this
    // returns at once.
    yield_to_wakee();
  }
  return true;
}

void idle_state::wake_all() noexcept {
  for (;;) {
    parker* p = nullptr;
    {
      std::lock_guard<os_mutex> lock(m_lock);
      sleeper* s = m_roamers != nullptr ? m_roamers : m_helpers;
      if (s == nullptr) return;
      sleeper_to_searcher(*s);
      p = s->m_parker;
    }
    if (p != nullptr) p->signal(parker::k_work);  // placeholders: nothing to stop
  }
}

bool idle_state::retire(sleeper& me, sleeper& placeholder) noexcept {
  std::lock_guard<os_mutex> lock(m_lock);
  if (!me.m_listed) return false;  // a waker took us; its k_work signal is on its way
  assert(!placeholder.m_listed && placeholder.m_parker == nullptr);
  // The placeholder takes our place: same list, same position, same kind, and the sleeping
  // count we added in S1 now stands for it. Nothing a publisher reads changes.
  placeholder.m_kind = me.m_kind;
  placeholder.m_domain = me.m_domain;
  placeholder.m_prev = me.m_prev;
  placeholder.m_next = me.m_next;
  if (me.m_prev != nullptr) {
    me.m_prev->m_next = &placeholder;
  } else {
    head(me.m_kind) = &placeholder;
  }
  if (me.m_next != nullptr) me.m_next->m_prev = &placeholder;
  placeholder.m_listed = true;
  me.m_prev = me.m_next = nullptr;
  me.m_listed = false;
  check_invariants();
  return true;
}

void idle_state::wake_stand_ins() noexcept {
  for (;;) {
    parker* p = nullptr;
    {
      std::lock_guard<os_mutex> lock(m_lock);
      sleeper* s = m_roamers;
      while (s != nullptr && s->m_kind != idle_kind::stand_in)
        s = s->m_next;
      if (s == nullptr) return;
      sleeper_to_searcher(*s);
      p = s->m_parker;
    }
    p->signal(parker::k_work);
  }
}

void idle_state::prepare_sleep(sleeper& me, idle_kind k) noexcept {
  me.m_domain = current_domain();  // only this thread and wakers under the lock read it
  {
    std::lock_guard<os_mutex> lock(m_lock);
    // Debug invariants: a thread is listed at most once, and only a searcher goes to sleep
    // (its own count is in the word, which other threads' transitions cannot take away).
    assert(!me.m_listed && "a thread sleeps in one list, once");
    // relaxed: a debug check of this thread's own count, which only it can take away.
    assert(searching(m_state.load(std::memory_order_relaxed)) > 0 && "only searchers sleep");
    assert((!roams(k) || searching(m_roaming.load(std::memory_order_relaxed)) > 0) &&
           "only searching roamers sleep as roamers");
    me.m_kind = k;
    me.m_waker_cpu = -1;  // until a waker that runs on takes us
    sleeper*& h = head(k);
    me.m_prev = nullptr;
    me.m_next = h;
    if (h != nullptr) h->m_prev = &me;
    h = &me;
    me.m_listed = true;
    // S1: seq_cst RMWs; with the fence below they pair with a publisher's fence (P2).
    m_state.fetch_add(k_one_sleeper - k_one_searcher, std::memory_order_seq_cst);
    if (roams(k)) m_roaming.fetch_add(k_one_sleeper - k_one_searcher, std::memory_order_seq_cst);
    check_invariants();
  }
  // S2: orders S1 before the re-check loads of the queues (S3).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  HEIST_PERTURB_POINT(sleep_listed);
}

bool idle_state::cancel_sleep(sleeper& me) noexcept {
  std::lock_guard<os_mutex> lock(m_lock);
  if (!me.m_listed) return false;  // a waker took us; its k_work signal is on its way
  sleeper_to_searcher(me);
  return true;
}

}  // namespace heist::detail
