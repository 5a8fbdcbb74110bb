// heist, with a choice of steal policy.
#pragma once

#include <heist/heist.hpp>

#include <cstddef>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace bench {

inline const char* policy_name(heist::steal_policy p) {
  switch (p) {
    case heist::steal_policy::sticky_random:
      return "heist";
    case heist::steal_policy::random:
      return "heist random";
    case heist::steal_policy::round_robin:
      return "heist round_robin";
    case heist::steal_policy::none:
      return "heist none";
  }
  return "heist ?";
}

// One long-lived executor per (threads, policy), shared by every sample of every workload,
// as oneTBB's and OpenMP's thread pools live on across samples: a sample measures the work,
// not the start of fresh threads. A sleeping pool costs nothing meanwhile.
inline heist::executor& shared_executor(int threads, heist::steal_policy policy) {
  static std::mutex lock;
  static std::map<std::pair<int, heist::steal_policy>, std::unique_ptr<heist::executor>> pools;
  const std::lock_guard<std::mutex> guard(lock);
  std::unique_ptr<heist::executor>& pool = pools[{threads, policy}];
  if (!pool) {
    heist::executor_options o;
    o.num_workers = static_cast<std::size_t>(threads);
    o.policy = policy;
    o.name = "heist";
    pool = std::make_unique<heist::executor>(o);
  }
  return *pool;
}

class heist_backend {
 public:
  // trace: a fresh executor of its own that records spans (heist-bench --trace).
  explicit heist_backend(int threads,
                         heist::steal_policy policy = heist::steal_policy::sticky_random,
                         bool trace = false)
      : m_policy(policy) {
    if (trace) {
      heist::executor_options o;
      o.num_workers = static_cast<std::size_t>(threads);
      o.policy = policy;
      o.trace = true;
      o.name = "heist";
      m_own = std::make_unique<heist::executor>(o);
      m_exec = m_own.get();
    } else {
      m_exec = &shared_executor(threads, policy);
    }
  }
  std::string name() const {
    return std::string(policy_name(m_policy)) + (m_use_blocking ? "" : " (no blocking())");
  }

  // Workloads that wait (workloads/arena_workloads.hpp) wrap their waits in heist::blocking
  // unless this is off.
  void set_blocking(bool on) { m_use_blocking = on; }
  bool blocking_enabled() const { return m_use_blocking; }

  // The root runs on a worker; this thread blocks without helping, so exactly `threads`
  // threads work.
  template <class F>
  void run(F&& root) {
    std::latch done(1);
    m_exec->post([&] {
      root();
      done.count_down();
    });
    done.wait();
  }

  template <class A, class B>
  static void fork2(A&& a, B&& b) {
    heist::task_group g;
    g.run(std::forward<A>(a));
    b();
    g.wait();
  }

  // The group a user's own fork-join function holds (workloads/fork_join.hpp, fib_plain).
  static constexpr bool k_has_task_group = true;
  using group = heist::task_group;

  static constexpr bool k_has_parallel_invoke = true;
  template <class A, class B>
  static void invoke2(A&& a, B&& b) {
    heist::parallel_invoke(std::forward<A>(a), std::forward<B>(b));
  }

  template <class F>
  static void fork_each(std::size_t n, F&& f) {
    heist::task_group g;
    for (std::size_t i = 0; i < n; ++i)
      g.run([&f, i] { f(i); });
    g.wait();
  }

  template <class F>
  void post(F&& f) {
    m_exec->post(std::forward<F>(f));
  }

  heist::executor& exec() { return *m_exec; }

 private:
  heist::steal_policy m_policy;
  bool m_use_blocking = true;
  std::unique_ptr<heist::executor> m_own;
  heist::executor* m_exec;
};

}  // namespace bench
