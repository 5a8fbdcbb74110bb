// Helpers shared by heist's tests.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "heist/executor.hpp"
#include "heist/parallel_for.hpp"
#include "heist/partitioner.hpp"
#include "heist/pipeline.hpp"
#include "heist/task_group.hpp"

namespace heist_test {

// One knob scales the iteration counts of stress tests: HEIST_STRESS_SCALE=0.1 for a quick
// run (sanitizers), =10 for a soak. Never below 1 iteration.
inline std::size_t scaled(std::size_t n) {
  static const double factor = [] {
    const char* s = std::getenv("HEIST_STRESS_SCALE");
    return s != nullptr ? std::atof(s) : 1.0;
  }();
  const double v = static_cast<double>(n) * factor;
  return v < 1.0 ? 1 : static_cast<std::size_t>(v);
}

// How often each index 0..n-1 ran: the exactly-once check of tasks and loop iterations.
// Relaxed: the counts are read after the join or wait that ran them, which orders them.
class exactly_once {
 public:
  explicit exactly_once(std::size_t n)
      : m_hits(std::make_unique<std::atomic<int>[]>(n)), m_size(n) {
    for (std::size_t i = 0; i < n; ++i)
      m_hits[i].store(0, std::memory_order_relaxed);
  }
  void hit(std::size_t i) noexcept { m_hits[i].fetch_add(1, std::memory_order_relaxed); }
  int hits(std::size_t i) const noexcept { return m_hits[i].load(std::memory_order_relaxed); }
  // Indices that did not run exactly once.
  std::size_t wrong() const noexcept {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < m_size; ++i)
      bad += hits(i) != 1;
    return bad;
  }
  // Indices that ran more than once (a call cut short may leave some unrun, never these).
  std::size_t repeated() const noexcept {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < m_size; ++i)
      bad += hits(i) > 1;
    return bad;
  }

 private:
  std::unique_ptr<std::atomic<int>[]> m_hits;
  std::size_t m_size;
};

// A binary fork-join tree of nested task_groups over the leaves [lo, hi): each leaf hits its
// index once.
inline void split_leaves(exactly_once& once, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) {
    once.hit(lo);
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  heist::task_group g;
  g.run([&once, lo, mid] { split_leaves(once, lo, mid); });
  split_leaves(once, mid, hi);
  g.wait();
}

// Holds every leasable slot of `ex` (executor_impl::k_leasable_slots: four): one outside
// thread per slot, inside task_group::run_and_wait (a leased slot for the call), counts
// `occupied` down once it holds its slot and blocks until `release` opens;
// open_and_join() opens it (for every other thread blocked on it too) and joins them. For
// tests of a thread that finds no slot free.
constexpr int k_leasable_slots = 4;
class leasable_slots_held {
 public:
  leasable_slots_held(heist::executor& ex, std::latch& occupied, std::latch& release)
      : m_release(release) {
    for (int i = 0; i < k_leasable_slots; ++i) {
      m_holders.emplace_back([&] {
        heist::task_group g(ex);
        g.run_and_wait([&] {
          occupied.count_down();
          release.wait();
        });
      });
    }
  }
  void open_and_join() {
    m_release.count_down();
    for (auto& t : m_holders)
      t.join();
    m_holders.clear();
  }
  ~leasable_slots_held() {
    if (!m_holders.empty()) open_and_join();
  }

 private:
  std::latch& m_release;
  std::vector<std::thread> m_holders;
};

// The calling thread's CPU affinity mask (empty if the kernel refused), and mask equality:
// the wake and start placement tests check that heist gave every mask back.
inline cpu_set_t this_thread_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) CPU_ZERO(&set);
  return set;
}
inline bool same_mask(const cpu_set_t& a, const cpu_set_t& b) {
  return CPU_EQUAL(&a, &b) != 0;
}

// A pipeline's first filter (serial, in order) that makes 0, 1, ..., n - 1, counting in `next`.
inline heist::filter<void, int> numbers_below(int n, int& next) {
  return heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                       [n, &next](heist::flow_control& fc) {
                                         if (next == n) {
                                           fc.stop();
                                           return 0;
                                         }
                                         return next++;
                                       });
}

// The process's thread count, from /proc/self/status (-1 if it cannot be read).
inline int process_threads() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// Not inlined: glibc declares pthread_self() const, and clang 14, inlining this into a
// coroutine, reuses the thread handle read before a suspension point after it (the coroutine
// may have resumed on another thread). A call of its own reads it afresh.
__attribute__((noinline)) inline std::string this_thread_name() {
  char buf[32] = {};
  pthread_getname_np(pthread_self(), buf, sizeof buf);
  return buf;
}

// Spins (yielding) until pred() holds or the timeout passes; returns pred().
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return pred();
    std::this_thread::yield();
  }
  return true;
}

// Waits for pred() in a round-by-round handoff between two test threads: spins first (a
// peer on another core answers within a microsecond, and a race test needs both threads
// running), then yields, so that on an oversubscribed machine (two such tests sharing two
// cores) the peer gets the core at once instead of at the next scheduler tick.
template <class Pred>
void spin_then_yield_until(Pred pred) {
  for (int spins = 0; !pred(); ++spins) {
    if (spins >= 4096) std::this_thread::yield();
  }
}

// Starts ex.wait_idle() on its own thread once `ready()` holds, then calls `finish()`, which
// lets the last task end. Returns whether wait_idle() returned within `timeout` of that. If
// it did not (a lost quiescence wake-up), posts no-op tasks until it does, so that a failing
// test ends instead of hanging.
template <class Ready, class Finish>
bool wait_idle_returns_after(heist::executor& ex, Ready ready, Finish finish,
                             std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  std::atomic<bool> returned{false};
  if (!eventually(ready)) return false;
  std::thread waiter([&] {
    ex.wait_idle();
    returned = true;
  });
  // Let the waiter find the last task in flight and go to sleep before it ends.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  finish();
  const bool in_time = eventually([&] { return returned.load(); }, timeout);
  while (!returned.load()) {
    ex.post([] {});
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  waiter.join();
  return in_time;
}

// parallel_for over `range` with partitioner number `kind` % 4: auto, simple, static, or
// the caller's affinity partitioner `ap` (so repeated calls can replay its shares).
template <class Range, class Body>
void parallel_for_with_partitioner(unsigned kind, heist::executor& ex, const Range& range,
                                   const Body& body, heist::affinity_partitioner& ap) {
  switch (kind % 4) {
    case 0:
      heist::parallel_for(ex, range, body);
      break;
    case 1:
      heist::parallel_for(ex, range, body, heist::simple_partitioner{});
      break;
    case 2:
      heist::parallel_for(ex, range, body, heist::static_partitioner{});
      break;
    default:
      heist::parallel_for(ex, range, body, ap);
      break;
  }
}

// A task_group owned by a worker of `ex` (created inside one of its tasks: owner-counted),
// holding `children` tasks that each wait for `go` and then count themselves in `finished`.
// Returns once every child is spawned. Posts rather than submit().get(), so that the calling
// thread, which would help in get(), runs none of the blocked children.
inline std::unique_ptr<heist::task_group> group_owned_by_a_worker(heist::executor& ex, int children,
                                                                  std::atomic<bool>& go,
                                                                  std::atomic<int>& finished) {
  std::unique_ptr<heist::task_group> g;
  std::atomic<bool> spawned{false};
  ex.post([&] {
    g = std::make_unique<heist::task_group>();
    for (int i = 0; i < children; ++i) {
      g->run([&go, &finished] {
        while (!go.load())
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        finished.fetch_add(1);
      });
    }
    spawned = true;
  });
  while (!spawned.load())
    std::this_thread::yield();
  return g;
}

// Keeps `workers` workers of `ex` busy: posted tasks that yield until release() (or the
// destructor). The constructor returns once all of them run, so that tasks posted meanwhile
// queue up in the injection queue and wake nobody.
class occupied_workers {
 public:
  occupied_workers(heist::executor& ex, int workers)
      : m_release(std::make_shared<std::atomic<bool>>(false)) {
    auto running = std::make_shared<std::atomic<int>>(0);
    for (int i = 0; i < workers; ++i) {
      ex.post([release = m_release, running] {
        running->fetch_add(1);
        while (!release->load())
          std::this_thread::yield();
      });
    }
    while (running->load() != workers)
      std::this_thread::yield();
  }
  occupied_workers(const occupied_workers&) = delete;
  occupied_workers& operator=(const occupied_workers&) = delete;
  ~occupied_workers() { release(); }
  void release() { m_release->store(true); }

 private:
  std::shared_ptr<std::atomic<bool>> m_release;  // shared: the tasks may outlive this object
};

// fib(n) with one spawn per call and no cutoff, on the current executor (the caller's when
// it is a worker, default_executor() otherwise): the finest-grained fork-join there is.
inline long fork_join_fib(int n) {
  if (n < 2) return n;
  long a = 0;
  heist::task_group g;
  g.run([&a, n] { a = fork_join_fib(n - 1); });
  const long b = fork_join_fib(n - 2);
  g.wait();
  return a + b;
}

// The deep-recursion probe: `depth` nested levels, each a task_group on `ex` that runs one
// child and waits for it, so every level's wait helps with the next. Counts the levels
// reached in `levels`. 100,000 levels overflow an 8 MiB stack unless waits can move on.
inline void chain_of_waits(heist::executor& ex, std::atomic<long>& levels, int depth) {
  if (depth == 0) return;
  levels.fetch_add(1, std::memory_order_relaxed);
  heist::task_group g(ex);
  g.run([&ex, &levels, depth] { chain_of_waits(ex, levels, depth - 1); });
  g.wait();
}

// A thread-safe log of names (of tasks, nodes, arenas), in the order they were added.
class run_log {
 public:
  void add(const std::string& s) {
    std::lock_guard<std::mutex> lock(m_lock);
    m_entries.push_back(s);
  }
  void add(char c) { add(std::string(1, c)); }
  std::vector<std::string> entries() const {
    std::lock_guard<std::mutex> lock(m_lock);
    return m_entries;
  }
  std::string joined() const {
    std::string out;
    for (const auto& e : entries())
      out += e;
    return out;
  }
  // The index of the first entry `s`; the number of entries when there is none.
  std::size_t position(const std::string& s) const {
    const auto e = entries();
    for (std::size_t i = 0; i < e.size(); ++i)
      if (e[i] == s) return i;
    return e.size();
  }

 private:
  mutable std::mutex m_lock;
  std::vector<std::string> m_entries;
};

}  // namespace heist_test
