// oneTBB loops: tbb::parallel_for / parallel_reduce with its default (auto) partitioner or
// a simple partitioner with a grain size, inside a task_arena of the thread count.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <cstddef>
#include <string>

namespace bench {

class tbb_loops {
 public:
  tbb_loops(int threads, bool simple, std::size_t grain = 1)
      : m_arena(threads), m_simple(simple), m_grain(grain) {}
  std::string name() const {
    return m_simple ? "oneTBB simple,g=" + std::to_string(m_grain) : "oneTBB auto";
  }
  template <class Fn>
  void run(Fn&& fn) {
    m_arena.execute([&] { fn(*this); });
  }
  template <class Body>
  void for_range(std::size_t n, Body&& body) {
    const tbb::blocked_range<std::size_t> r(0, n, m_grain);
    auto b = [&](const tbb::blocked_range<std::size_t>& s) { body(s.begin(), s.end()); };
    if (m_simple) {
      tbb::parallel_for(r, b, tbb::simple_partitioner{});
    } else {
      tbb::parallel_for(r, b);
    }
  }
  template <class Body>
  double sum(std::size_t n, Body&& body) {
    const tbb::blocked_range<std::size_t> r(0, n, m_grain);
    auto b = [&](const tbb::blocked_range<std::size_t>& s, double acc) {
      return acc + body(s.begin(), s.end());
    };
    auto join = [](double x, double y) { return x + y; };
    if (m_simple) return tbb::parallel_reduce(r, 0.0, b, join, tbb::simple_partitioner{});
    return tbb::parallel_reduce(r, 0.0, b, join);
  }

 private:
  tbb::task_arena m_arena;
  bool m_simple;
  std::size_t m_grain;
};

}  // namespace bench
