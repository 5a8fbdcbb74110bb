// libfork (github.com/ConorWilliams/libfork) as an optional baseline for coroutine fork-join:
// its fib, `co_await lf::fork(&a, fib)(n - 1); co_await lf::call(&b, fib)(n - 2);
// co_await lf::join;`, on its lazy_pool with the calling thread only waiting. Built only when
// CMake is given libfork's source tree (HEIST_BENCH_LIBFORK_DIR; then HEIST_BENCH_HAVE_LIBFORK
// is 1); libfork_fib.cpp is the only file that includes libfork.
#pragma once

#include <memory>

namespace bench {

class libfork_runner {
 public:
  explicit libfork_runner(int threads);
  ~libfork_runner();
  libfork_runner(const libfork_runner&) = delete;
  libfork_runner& operator=(const libfork_runner&) = delete;
  long fib(int n);

 private:
  struct pool;
  std::unique_ptr<pool> m_pool;
};

}  // namespace bench
