// Serial execution: the baseline of every speedup.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace bench {

class serial_backend {
 public:
  explicit serial_backend(int /*threads*/) {}
  std::string name() const { return "serial"; }
  template <class F>
  void run(F&& root) {
    root();
  }
  template <class A, class B>
  static void fork2(A&& a, B&& b) {
    a();
    b();
  }
  template <class F>
  static void fork_each(std::size_t n, F&& f) {
    for (std::size_t i = 0; i < n; ++i)
      f(i);
  }
  template <class F>
  void post(F&& f) {
    f();
  }
};

}  // namespace bench
