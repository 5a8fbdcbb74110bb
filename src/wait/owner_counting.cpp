// The process-wide barrier behind owner-counted joins (owner_count.hpp,
// docs/design/protocols.md "Owner-counted joins"): a group's owner writes its local count with
// plain stores and re-reads m_owner with no fence; a thread that claims the group pays for both
// sides with membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which runs a full memory barrier on
// every CPU that is running a thread of this process (an asymmetric Dekker pair, as in liburcu and
// folly's asymmetricHeavyBarrier). Without it (not Linux, an old kernel, a seccomp filter that
// refuses the call) owner counting stays off and every group counts with atomic RMWs.
// The same barrier lets a deque's owner pop without a fence while no thief steals from it
// (chase_lev_deque.hpp, "fence-free pops"); fence_free_retry_pops says where.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "heist/detail/core/chase_lev_deque.hpp"
#include "heist/detail/platform/cpu.hpp"
#include "heist/detail/wait/wait_context.hpp"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace heist::detail {

namespace {
bool register_barrier() noexcept {
#if defined(__linux__) && defined(SYS_membarrier)
  const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}
}  // namespace

// Called by every executor's constructor, before its workers start.
void enable_owner_counting() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    // relaxed: see g_owner_counting; a group created before this counts in m_state only.
    g_owner_counting.store(register_barrier(), std::memory_order_relaxed);
  });
}

std::uint32_t fence_free_retry_pops(std::size_t workers) noexcept {
  // A quiet spell of 256 fenced pops (a few microseconds of fork-join) before the owner tries
  // fence_free again; the deque doubles it while thieves keep interrupting.
  constexpr std::uint32_t k_retry_pops = 256;
  // The mode needs the process-wide barrier: register it here, so that no caller depends on
  // having done so first (once per process; a call_once, cheap after the first).
  enable_owner_counting();
  // relaxed: set by the call above, on this thread or (call_once's synchronization) another.
  if (!g_owner_counting.load(std::memory_order_relaxed)) return 0;
  if (workers > k_fence_free_max_workers) return 0;
  const char* env = std::getenv("HEIST_FENCE_FREE_POPS");
  if (env != nullptr && std::strcmp(env, "0") == 0) return 0;
  return k_retry_pops;
}

namespace {
std::atomic<std::uint64_t> g_barriers_run{0};
}  // namespace

std::uint64_t process_wide_barriers_run() noexcept {
  // relaxed: a statistic; tests read it after joining the threads that ran barriers.
  return g_barriers_run.load(std::memory_order_relaxed);
}

void process_wide_barrier() noexcept {
  // relaxed: a statistic (process_wide_barriers_run).
  g_barriers_run.fetch_add(1, std::memory_order_relaxed);
#if defined(__linux__) && defined(SYS_membarrier)
  // Only reached when registration succeeded (a group is owner-counted only then), and the
  // registration is inherited by fork()ed children, so the call does not fail in practice.
  // If it ever does, register again, then fall back to the slower global command; with no
  // barrier at all the claim would be unsound, so that ends the process with a message.
  // The fences cover this thread itself.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0 &&
      (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0 ||
       syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) &&
      syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0) {
    std::fputs("heist: membarrier failed after it had been registered\n", stderr);
    std::abort();
  }
  // seq_cst: this thread's own side after the barrier (the fence before is the same).
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace heist::detail
