// libfork's fib on its lazy_pool (libfork_fib.hpp), written as libfork's own benchmark
// writes it.
#include "libfork_fib.hpp"

#include <libfork.hpp>

namespace bench {

namespace {

constexpr auto libfork_fib = [](auto fib, int n) LF_STATIC_CALL -> lf::task<long> {
  if (n < 2) co_return n;
  long a = 0, b = 0;
  co_await lf::fork(&a, fib)(n - 1);
  co_await lf::call(&b, fib)(n - 2);
  co_await lf::join;
  co_return a + b;
};

}  // namespace

struct libfork_runner::pool {
  explicit pool(int threads) : lazy(static_cast<std::size_t>(threads)) {}
  lf::lazy_pool lazy;
};

libfork_runner::libfork_runner(int threads) : m_pool(std::make_unique<pool>(threads)) {}
libfork_runner::~libfork_runner() = default;

long libfork_runner::fib(int n) {
  return lf::sync_wait(m_pool->lazy, libfork_fib, n);
}

}  // namespace bench
