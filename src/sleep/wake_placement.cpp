// wake_placement: the waker's yield and the wakee's step off its waker's CPU (the design is
// in wake_placement.hpp).
#include "heist/detail/sleep/wake_placement.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "heist/detail/core/thread_record.hpp"
#include "heist/detail/diagnostics/perturb.hpp"
#include "platform/affinity_mask.hpp"

namespace heist::detail {

namespace {
// At least two CPUs, and no more workers than CPUs (else sharing one is unavoidable).
bool spreads(const std::optional<affinity_mask>& mask, std::size_t workers) noexcept {
  return mask && mask->count() >= 2 && workers <= mask->count();
}
}  // namespace

bool spread_wakes(std::size_t workers) noexcept {
  return spreads(affinity_mask::of_calling_thread(), workers);
}

int current_cpu() noexcept {
  return sched_getcpu();
}

void yield_to_wakee() noexcept {
  (void)sched_yield();
}

int step_off_cpu(int cpu) noexcept {
  const auto mask = affinity_mask::of_calling_thread();
  if (!mask || !mask->has(cpu) || mask->count() < 2) return -1;
  affinity_mask others = *mask;
  others.remove(cpu);
  // The kernel migrates a thread that runs on a CPU outside its new mask before
  // sched_setaffinity returns, so the CPU read next is already another one.
  if (others.count() == 0 || !others.apply()) return -1;
  const int moved_to = sched_getcpu();
  // Back to the mask the thread had: the OS may place it anywhere again from now on. If the
  // mask cannot be restored (a cpuset shrank meanwhile), the narrower one stays: still a
  // subset of what the thread was allowed.
  (void)mask->apply();
  return moved_to;
}

int step_off_waker_cpu(const thread_context& c) noexcept {
  const int waker = sleeper_of(c).m_waker_cpu;
  if (waker < 0 || c.worker_of() == nullptr || sched_getcpu() != waker) return -1;
  HEIST_PERTURB_POINT(wakee_stepping_off);
  return step_off_cpu(waker);
}

// --- where a fresh executor's workers start (wake_placement.hpp) --------------------------
class start_placement {
 public:
  start_placement(affinity_mask mask, std::vector<int> targets)
      : m_mask(std::move(mask)),
        m_targets(std::move(targets)),
        m_placed(std::make_unique<std::atomic<bool>[]>(m_targets.size())) {}

  void place(std::size_t index, std::thread& t) noexcept {
    if (index < m_targets.size()) {
      affinity_mask one(m_mask);
      one.keep_only(m_targets[index]);
      (void)one.apply_to(t.native_handle());  // refused: the thread starts where the OS put it
      // release: pairs with settle's acquire, so the worker takes its mask back only after
      // this narrowing (else the narrow mask could be the last word and pin it for good).
      m_placed[index].store(true, std::memory_order_release);
    }
  }

  void settle(std::size_t index) noexcept {
    if (index >= m_targets.size()) return;
    // acquire: pairs with place()'s release, so the restore below comes after the narrowing.
    while (!m_placed[index].load(std::memory_order_acquire))
      std::this_thread::yield();
    t_start_cpu = sched_getcpu();
    // Back to the creator's mask. If the kernel refuses (a cpuset shrank meanwhile), the
    // thread keeps the one CPU it has, as a thread whose cpuset shrank to one would.
    (void)m_mask.apply();
  }

  static thread_local int t_start_cpu;

 private:
  affinity_mask m_mask;
  std::vector<int> m_targets;  // worker i's CPU
  std::unique_ptr<std::atomic<bool>[]> m_placed;
};

thread_local int start_placement::t_start_cpu = -1;

std::shared_ptr<start_placement> plan_start_placement(std::size_t workers) {
  auto mask = affinity_mask::of_calling_thread();
  if (!spreads(mask, workers)) return nullptr;
  const std::vector<int> cpus = mask->cpus();
  // The creator's own CPU comes last: it is busy now (it creates the threads), and with
  // fewer workers than CPUs it goes unused.
  const auto own = std::find(cpus.begin(), cpus.end(), sched_getcpu());
  const std::size_t first =
      own == cpus.end() ? 0 : static_cast<std::size_t>(own - cpus.begin()) + 1;
  std::vector<int> targets(workers);
  for (std::size_t i = 0; i < workers; ++i)
    targets[i] = cpus[(first + i) % cpus.size()];
  return std::make_shared<start_placement>(std::move(*mask), std::move(targets));
}

void place_started_worker(start_placement& p, std::size_t index, std::thread& t) noexcept {
  p.place(index, t);
}

void settle_started_worker(start_placement& p, std::size_t index) noexcept {
  p.settle(index);
}

int start_cpu() noexcept {
  return start_placement::t_start_cpu;
}

}  // namespace heist::detail
