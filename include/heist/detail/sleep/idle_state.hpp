// idle_state: the one owner of sleeping and waking for one arena. Every rule about who
// sleeps, whom a publication wakes, and who must look once more before it stops searching
// lives here and in src/sleep/idle_state.cpp; the scheduler asks ("I found nothing and will
// park", "I published work into this arena", "I stop searching") instead of touching counters.
//
// Kinds of idle thread. A thread is *busy* (running a task), *searching* (out of local work,
// trying the injection queues and other deques), or *sleeping* (parked in this object's
// lists). What it can take decides its kind:
//   roamer    a worker or blocking() stand-in between tasks in its executor's default
//             arena: takes any task of the arena, and visits task arenas that have work and
//             a free slot. Only roamers can answer a task arena's call for a visitor.
//   helper    a thread in a helping wait (task_group::wait, future::get) registered in this
//             arena: takes the arena's tasks, and also wakes when its group finishes.
//   (restricted waiters - inside isolate(), or without a slot of a task_arena - may not take
//   every task of the arena; they are never listed and poll their group at 1 ms instead,
//   see search.cpp. A wake-up for work they cannot take would be lost on them.)
// Roamers and helpers sleep in separate lists, so that a publication for work only a roamer
// can take never lands on a helper. So a thread parked in a nested
// task_group::wait (a helper of its home arena) is not woken when a task arrives in a
// task_arena it does not occupy: that arena's call wakes a roamer (notify_visitor_wanted),
// which visits; the helper wakes for its home arena's work or its group's end.
// Graph runs and parked pipeline items hold no thread at all (src/compose/graph_runner.cpp,
// src/compose/pipeline.cpp); waiting for them is a helping wait.
//
// Counters. m_state counts searching and sleeping threads of both kinds; m_roaming counts
// the roamers among them. Only idle transitions write them; the spawn fast path reads one.
//
// The protocol (sleeper S1-S4, publisher P1-P4, leaver L1-L2), why no publication is lost,
// and the spawn's cheaper pair for a push into an empty deque: README.md beside this file.
#pragma once

#include <atomic>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/platform/os_mutex.hpp"
#include "heist/detail/sleep/parker.hpp"

namespace heist::detail {

enum class idle_kind : std::uint8_t {
  roamer,    // a worker or stand-in between tasks: any work of the arena, and task arenas
  helper,    // a helping waiter: this arena's work, and its group's end
  stand_in,  // a roamer that is a blocking() stand-in (may be told to retire)
};

inline bool roams(idle_kind k) noexcept {
  return k != idle_kind::helper;
}

// A thread's entry in a sleeper list; lives in its thread_context. An entry without a
// parker stands for a worker whose thread retired after idle_timeout (executor_impl's
// retired-worker placeholders): waking it calls m_restart, which starts a thread for the
// worker's slot, instead of signalling a parker. See "Idle workers retire" in
// docs/design/overview.md.
struct sleeper {
  parker* m_parker = nullptr;
  void (*m_restart)(sleeper&) noexcept = nullptr;  // placeholders only
  sleeper* m_prev = nullptr;
  sleeper* m_next = nullptr;
  idle_kind m_kind = idle_kind::roamer;  // set by prepare_sleep
  std::uint32_t m_domain = 0;            // cache domain it slept in (topology.hpp)
  // The CPU of the waker that took it off the list, if that waker runs on after waking it
  // and the arena spreads wake-ups (wake_placement.hpp); else -1. Written under
  // idle_state::m_lock, read by the woken thread after the signal's acquire.
  int m_waker_cpu = -1;
  bool m_listed = false;  // guarded by idle_state::m_lock
};

// The sleeper a waker in cache domain `mine` takes from a list: the first of the first
// `scan` entries that slept in `mine`, else the head (the most recent sleeper).
inline sleeper* nearest_sleeper(sleeper* head, std::uint32_t mine, int scan) noexcept {
  sleeper* s = head;
  for (int k = 0; s != nullptr && k < scan; ++k, s = s->m_next) {
    if (s->m_domain == mine) return s;
  }
  return head;
}

class HEIST_API idle_state {
 public:
  static constexpr std::uint64_t k_one_searcher = 1;
  static constexpr std::uint64_t k_one_sleeper = std::uint64_t{1} << 32;

  static std::uint32_t searching(std::uint64_t s) noexcept { return static_cast<std::uint32_t>(s); }
  static std::uint32_t sleeping(std::uint64_t s) noexcept {
    return static_cast<std::uint32_t>(s >> 32);
  }

  // --- publishers -----------------------------------------------------------------------
  // After a spawn from inside a task into an *empty* deque (see the file comment): P3-P4.
  // seq_cst, after the push's seq_cst store of bottom (a plain load on x86): the store and
  // this load stand for P2 and pair with a sleeper's S1 RMW and S2 fence, and with a leaving
  // searcher's L2 fence, in the single total order (either this load sees the sleeper or
  // last searcher's count, or their re-check sees the push). A push onto a non-empty deque
  // calls nothing and reads nothing (the file comment says why no sleeper can miss it).
  HEIST_ALWAYS_INLINE void notify_after_spawn() noexcept {
    const std::uint64_t s = m_state.load(std::memory_order_seq_cst);
    if (HEIST_UNLIKELY(searching(s) == 0 && sleeping(s) != 0)) wake_one(false, true);
  }

  // After publishing a task from outside (P2-P4).
  void notify_after_inject() noexcept {
    // P2: pairs with the sleeper's fence S2 and the leaver's fence L2.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::uint64_t s = m_state.load(std::memory_order_relaxed);
    if (searching(s) == 0 && sleeping(s) != 0) wake_one(false);
  }

  // A task arena has work and a free slot (P3-P4 for roamers). The caller has fenced after
  // publishing (attract_visitor in arena_visit.cpp).
  void notify_visitor_wanted() noexcept {
    const std::uint64_t s = m_roaming.load(std::memory_order_relaxed);
    if (searching(s) == 0 && sleeping(s) != 0) wake_one(true);
  }

  // Wakes one sleeper (a roamer if `roamer_only`, else a roamer first and then a helper),
  // turning it into a searcher; false if none of those sleeps. On a machine with several
  // cache domains, one that slept in the caller's domain if one of the first few does.
  // `waker_runs_on`: the caller goes on running after the wake (a spawning task, a searcher
  // that found work); where the arena spreads wake-ups, the woken thread is then kept off
  // the caller's CPU (wake_placement.hpp).
  bool wake_one(bool roamer_only, bool waker_runs_on = false) noexcept;
  // Wakes every live sleeper and takes retired workers' placeholders off the list without
  // restarting them (shutdown).
  void wake_all() noexcept;
  // Wakes the sleeping blocking() stand-ins, so that a surplus one retires.
  void wake_stand_ins() noexcept;

  // --- searchers ------------------------------------------------------------------------
  void begin_search(idle_kind k) noexcept {
    // relaxed: the count only suppresses wake-ups; a searcher always runs S1-S3 before it
    // can sleep or L1-L2 before it stops, and both end in a seq_cst fence.
    m_state.fetch_add(k_one_searcher, std::memory_order_relaxed);
    if (roams(k)) m_roaming.fetch_add(k_one_searcher, std::memory_order_relaxed);
  }
  // L1. Returns what L2 must re-check: nothing, this arena's queues (`any`), or task arenas
  // wanting a visitor (`visitors`), or both. The caller (search.cpp, leave_search) does the
  // fence and the re-check, since only it knows the queues.
  struct last_look {
    bool any = false;
    bool visitors = false;
    bool needed() const noexcept { return any || visitors; }
  };
  last_look end_search(idle_kind k) noexcept {
    last_look look;
    // relaxed: ordered before L2's fence, which is all the argument needs. The roaming word
    // first (begin_search adds to it last), so a roamer is never counted there alone.
    if (roams(k)) {
      const std::uint64_t r = m_roaming.fetch_sub(k_one_searcher, std::memory_order_relaxed);
      look.visitors = searching(r) == 1 && sleeping(r) != 0;
    }
    // relaxed: as above.
    const std::uint64_t prev = m_state.fetch_sub(k_one_searcher, std::memory_order_relaxed);
    look.any = searching(prev) == 1 && sleeping(prev) != 0;
    return look;
  }

  // S1 and S2: from searching to sleeping, as a thread of kind `k`.
  void prepare_sleep(sleeper& me, idle_kind k) noexcept;
  // Undo S1 after a successful re-check or a wake for another reason. Returns true if it
  // removed `me` from the list itself (the caller is a searcher again); false if a waker
  // already did (the caller is a searcher too, and a k_work signal is on its way: consume
  // it before parking again).
  bool cancel_sleep(sleeper& me) noexcept;

  // R2 of retirement: a listed sleeper whose park timed out hands its place in the list
  // (and its sleeping count) to `placeholder`, a parker-less entry. Returns false if a waker
  // took `me` first (then a k_work signal is on its way: consume it and search).
  bool retire(sleeper& me, sleeper& placeholder) noexcept;

  // Set once, before any thread of the arena runs: whether a waker that runs on and the
  // thread it wakes should not share a CPU (wake_placement.hpp).
  void set_spread_wakes(bool on) noexcept { m_spread_wakes = on; }
  bool spreads_wakes() const noexcept { return m_spread_wakes; }

  // relaxed: a hint for loop splitting (loop_core.hpp), which decides only how finely to
  // split, never whether work is seen.
  std::uint64_t snapshot() const noexcept { return m_state.load(std::memory_order_relaxed); }

 private:
  static constexpr int k_near_scan = 8;  // sleepers a waker looks through for a near one
  sleeper*& head(idle_kind k) noexcept { return roams(k) ? m_roamers : m_helpers; }
  void unlink(sleeper& s) noexcept;
  // Under m_lock: `s` leaves its list and becomes a searcher.
  void sleeper_to_searcher(sleeper& s) noexcept;
  void check_invariants() const noexcept;

  alignas(k_cache_line) std::atomic<std::uint64_t> m_state{0};
  std::atomic<std::uint64_t> m_roaming{0};
  alignas(k_cache_line) os_mutex m_lock;
  // Most recent sleeper first: it has the warmest cache. Guarded by m_lock.
  sleeper* m_roamers = nullptr;
  sleeper* m_helpers = nullptr;
  bool m_spread_wakes = false;  // read-only once threads run
};

}  // namespace heist::detail
