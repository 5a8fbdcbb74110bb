// OpenMP loop schedules: one `parallel for schedule(runtime)` region per loop, the schedule
// set with omp_set_schedule (static, dynamic,c or guided), as loops2.c does.
#pragma once

#include <omp.h>

#include <cstddef>
#include <string>

namespace bench {

class omp_loops {
 public:
  omp_loops(int threads, omp_sched_t kind, int chunk)
      : m_threads(threads), m_kind(kind), m_chunk(chunk) {}
  std::string name() const {
    switch (m_kind) {
      case omp_sched_static:
        return "OpenMP static";
      case omp_sched_dynamic:
        return "OpenMP dynamic," + std::to_string(m_chunk);
      case omp_sched_guided:
        return "OpenMP guided";
      default:
        return "OpenMP ?";
    }
  }
  template <class Fn>
  void run(Fn&& fn) {
    omp_set_schedule(m_kind, m_kind == omp_sched_dynamic ? m_chunk : 0);
    fn(*this);
  }
  template <class Body>
  void for_range(std::size_t n, Body&& body) {
    const auto count = static_cast<long>(n);
#pragma omp parallel for num_threads(m_threads) schedule(runtime)
    for (long i = 0; i < count; ++i)
      body(static_cast<std::size_t>(i), static_cast<std::size_t>(i) + 1);
  }
  template <class Body>
  double sum(std::size_t n, Body&& body) {
    const auto count = static_cast<long>(n);
    double s = 0;
#pragma omp parallel for num_threads(m_threads) schedule(runtime) reduction(+ : s)
    for (long i = 0; i < count; ++i)
      s += body(static_cast<std::size_t>(i), static_cast<std::size_t>(i) + 1);
    return s;
  }

 private:
  int m_threads;
  omp_sched_t m_kind;
  int m_chunk;
};

}  // namespace bench
