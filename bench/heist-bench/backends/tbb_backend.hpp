// oneTBB: task_group inside a task_arena of the requested size.
#pragma once

#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <cstddef>
#include <string>
#include <utility>

namespace bench {

class tbb_backend {
 public:
  // `threads` slots, one of them for the thread that calls execute() (oneTBB's default).
  explicit tbb_backend(int threads) : m_arena(threads) { m_arena.initialize(); }
  std::string name() const { return "oneTBB"; }

  template <class F>
  void run(F&& root) {
    m_arena.execute([&] { root(); });
  }
  template <class A, class B>
  static void fork2(A&& a, B&& b) {
    tbb::task_group g;
    g.run(std::forward<A>(a));
    b();
    g.wait();
  }
  // The group a user's own fork-join function holds (workloads/fork_join.hpp, fib_plain).
  static constexpr bool k_has_task_group = true;
  using group = tbb::task_group;

  static constexpr bool k_has_parallel_invoke = true;
  template <class A, class B>
  static void invoke2(A&& a, B&& b) {
    tbb::parallel_invoke(std::forward<A>(a), std::forward<B>(b));
  }
  template <class F>
  static void fork_each(std::size_t n, F&& f) {
    tbb::task_group g;
    for (std::size_t i = 0; i < n; ++i)
      g.run([&f, i] { f(i); });
    g.wait();
  }
  template <class F>
  void post(F&& f) {
    m_arena.enqueue(std::forward<F>(f));
  }

  tbb::task_arena& arena() { return m_arena; }

 private:
  tbb::task_arena m_arena;
};

}  // namespace bench
