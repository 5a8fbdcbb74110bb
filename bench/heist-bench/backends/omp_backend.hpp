// OpenMP tasks: a parallel region of the requested size, the root in a single construct,
// `omp task` + `omp taskwait` for fork-join.
#pragma once

#include <omp.h>

#include <cstddef>
#include <string>

namespace bench {

class omp_backend {
 public:
  explicit omp_backend(int threads) : m_threads(threads) {}
  std::string name() const { return "OpenMP tasks"; }

  template <class F>
  void run(F&& root) {
    F* r = &root;
#pragma omp parallel num_threads(m_threads) firstprivate(r)
    {
#pragma omp single
      { (*r)(); }
    }
  }
  template <class A, class B>
  static void fork2(A&& a, B&& b) {
    auto* pa = &a;
#pragma omp task firstprivate(pa)
    { (*pa)(); }
    b();
#pragma omp taskwait
  }
  template <class F>
  static void fork_each(std::size_t n, F&& f) {
    auto* pf = &f;
    for (std::size_t i = 0; i < n; ++i) {
#pragma omp task firstprivate(pf, i)
      { (*pf)(i); }
    }
#pragma omp taskwait
  }

  int threads() const {
    return m_threads;
  }

 private:
  int m_threads;
};

}  // namespace bench
