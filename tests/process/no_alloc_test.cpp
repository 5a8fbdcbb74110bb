// "No allocation per task on the hot path": spawning a small closure with task_group::run
// never calls the global operator new. This executable replaces operator new to count
// calls, so it stands alone (kind: requirement).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_news{0};
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return operator new(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {
// A closure with 48 bytes of captures.
struct payload {
  std::atomic<long>* sum;
  long a, b, c, d, e;
};
static_assert(sizeof(payload) == 48);
}  // namespace

TEST(NoAllocation, HundredThousandSpawnsFromAWorkerCallNoOperatorNew) {
  heist::executor ex(2);
  std::atomic<long> sum{0};
  std::atomic<std::size_t> news_during{~std::size_t{0}};
  ex.submit([&] {
      // Warm-up: fill the task pools and grow the deque once.
      {
        heist::task_group g;
        for (int i = 0; i < 100000; ++i)
          g.run([&sum] { sum.fetch_add(1); });
        g.wait();
      }
      g_news = 0;
      g_counting = true;
      {
        heist::task_group g;
        for (long i = 0; i < 100000; ++i) {
          payload p{&sum, i, i, i, i, i};
          g.run([p] { p.sum->fetch_add(p.a + p.b - p.c - p.d + p.e - p.a + 1); });
        }
        g.wait();
      }
      g_counting = false;
      news_during = g_news.load();
    }).get();
  EXPECT_EQ(news_during.load(), 0u);
  EXPECT_EQ(sum.load(), 200000);
}

TEST(NoAllocation, ForkJoinRecursionCallsNoOperatorNew) {
  heist::executor ex(2);
  std::atomic<std::size_t> news_during{~std::size_t{0}};
  const long warm = ex.submit([] { return heist_test::fork_join_fib(20); }).get();
  EXPECT_EQ(warm, 6765);
  ex.submit([&] {
      g_news = 0;
      g_counting = true;
      const long r = heist_test::fork_join_fib(24);  // about 46,000 spawns
      g_counting = false;
      news_during = g_news.load();
      EXPECT_EQ(r, 46368);
    }).get();
  EXPECT_EQ(news_during.load(), 0u);
}

TEST(NoAllocation, SpawnsFromAnExternalThreadCallNoOperatorNew) {
  heist::executor ex(2);
  std::atomic<long> sum{0};
  {
    heist::task_group warm(ex);
    for (int i = 0; i < 100000; ++i)
      warm.run([&sum] { sum.fetch_add(1); });
    warm.wait();
  }
  heist::task_group g(ex);
  g_news = 0;
  g_counting = true;
  for (int i = 0; i < 100000; ++i)
    g.run([&sum] { sum.fetch_add(1); });
  g.wait();
  g_counting = false;
  EXPECT_EQ(g_news.load(), 0u);
  EXPECT_EQ(sum.load(), 200000);
}

// Running a graph again allocates nothing per node. A rerun costs one
// future state per run()/run_n() call, whatever the graph's size; here 100 reruns of graphs
// of 10 and of 2,000 nodes (fan-out, fan-in and chains) call operator new once per call.
namespace {
std::size_t news_for_reruns(heist::executor& ex, std::size_t width, std::size_t runs) {
  heist::task_graph g;
  std::atomic<long> sum{0};
  auto source = g.emplace([] {});
  auto sink = g.emplace([] {});
  for (std::size_t i = 0; i < width; ++i) {
    auto a = g.emplace([&sum] { sum.fetch_add(1, std::memory_order_relaxed); });
    auto b = g.emplace([&sum] { sum.fetch_add(1, std::memory_order_relaxed); });
    source.precede(a);
    a.precede(b);
    b.precede(sink);
  }
  g.run_n(ex, 3).get();  // warm-up: validation, task pools, deques, request records
  g_news = 0;
  g_counting = true;
  heist::future<void> f = g.run_n(ex, runs);
  f.get();
  g_counting = false;
  EXPECT_EQ(sum.load(), static_cast<long>(2 * width * (3 + runs)));
  return g_news.load();
}
}  // namespace

TEST(NoAllocation, RerunningATaskGraphAllocatesNothingPerNode) {
  heist::executor ex(2);
  const std::size_t small = news_for_reruns(ex, 5, 100);
  const std::size_t large = news_for_reruns(ex, 1000, 100);
  EXPECT_LE(small, 1u);  // the future's state
  EXPECT_EQ(large, small);
}

// Coroutine frames come from heist's per-thread frame memory, not from the
// global operator new. Inside one coroutine, 100,000 awaits of child tasks and a fork-join
// coroutine tree (task_group::run of tasks, co_await join()) call operator new zero times.
namespace {
heist::task<long> leaf(long i) {
  co_return i;
}
heist::task<void> fib_into(int n, long& out) {
  if (n < 2) {
    out = n;
    co_return;
  }
  long a = 0, b = 0;
  heist::task_group g;
  g.run(fib_into(n - 1, a));
  co_await fib_into(n - 2, b);
  co_await g.join();
  out = a + b;
}
// Awaits in one loop. In unoptimized and sanitizer builds each await's symmetric transfer
// keeps a stack frame (no tail call), and the loop runs on fresh stacks, its awaiter resumed
// as a task each time the stack runs low (HEIST_AWAIT_STACK_GUARD): those resumptions'
// tasks come from the thread's task pool, not operator new, either.
constexpr long k_awaits = 100000;
heist::task<long> counted_awaits(std::atomic<std::size_t>& news_during) {
  long s = 0;
  long warm = 0;
  for (long i = 0; i < 1000; ++i)
    s += co_await leaf(i);  // warm the frame caches
  co_await fib_into(16, warm);
  g_news = 0;
  g_counting = true;
  for (long i = 0; i < k_awaits; ++i)
    s += co_await leaf(i);
  long fib = 0;
  co_await fib_into(16, fib);
  g_counting = false;
  news_during = g_news.load();
  co_return s + fib + warm;
}
}  // namespace

TEST(NoAllocation, CoroutineFramesDoNotComeFromOperatorNew) {
  heist::executor ex(2);
  std::atomic<std::size_t> news_during{~std::size_t{0}};
  const long s = heist::start(ex, counted_awaits(news_during)).get();
  EXPECT_EQ(s, 1000L * 999 / 2 + k_awaits * (k_awaits - 1) / 2 + 987 + 987);
  EXPECT_EQ(news_during.load(), 0u);
}

// A thread outside heist (no thread context) makes and drops futures' states: they come from
// the small-object depot (src/core/small_objects.cpp), not from the global operator new, and the
// thread stays outside heist throughout.
TEST(NoAllocation, FutureStatesOfAThreadOutsideHeistComeFromTheDepot) {
  std::size_t news_during = ~std::size_t{0};
  bool stayed_outside = false;
  long sum = 0;
  std::thread outside([&] {
    auto round = [&sum] {
      heist::promise<int> p;
      heist::future<int> f = p.get_future();
      p.set_value(1);
      sum += f.get();
    };
    for (int i = 0; i < 100; ++i)
      round();  // warm: the depot carves its slab
    g_news = 0;
    g_counting = true;
    for (int i = 0; i < 10000; ++i)
      round();
    g_counting = false;
    news_during = g_news.load();
    stayed_outside = heist::detail::t_context == nullptr;
  });
  outside.join();
  EXPECT_EQ(sum, 10100);
  EXPECT_TRUE(stayed_outside);
  EXPECT_EQ(news_during, 0u);
}
