// Futures reused after a combinator and futures that outlive their executor, under load:
// when_any loops over thousands of futures completed from several threads in random order
// (every value taken exactly once, each leftover re-awaited), and executors destroyed while
// futures, continuations and coroutines wait on outside promises (every waiter ends exactly
// once, with its value or with executor_closed, never touching freed memory).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {

// Completes promises in a shuffled order from `threads` threads.
class shuffled_setters {
 public:
  shuffled_setters(std::vector<heist::promise<int>>& ps, int threads, unsigned seed) {
    auto order = std::make_shared<std::vector<std::size_t>>(ps.size());
    std::iota(order->begin(), order->end(), std::size_t{0});
    std::shuffle(order->begin(), order->end(), std::mt19937(seed));
    for (int t = 0; t < threads; ++t) {
      m_threads.emplace_back([&ps, order, t, threads] {
        for (std::size_t k = static_cast<std::size_t>(t); k < order->size();
             k += static_cast<std::size_t>(threads)) {
          const std::size_t i = (*order)[k];
          ps[i].set_value(static_cast<int>(i));
        }
      });
    }
  }
  ~shuffled_setters() {
    for (auto& t : m_threads)
      t.join();
  }

 private:
  std::vector<std::thread> m_threads;
};

}  // namespace

TEST(FutureLifetimeStress, WhenAnyLoopsTakeEveryValueExactlyOnce) {
  heist::executor ex(2);
  const std::size_t n = heist_test::scaled(2000);
  for (unsigned round = 0; round < 3; ++round) {
    std::vector<heist::promise<int>> ps(n);
    std::vector<heist::future<int>> pending;
    for (auto& p : ps)
      pending.push_back(p.get_future());
    heist_test::exactly_once taken(n);
    {
      shuffled_setters setters(ps, 3, round);
      while (!pending.empty()) {
        auto r = heist::when_any(std::move(pending)).get();
        ASSERT_LT(r.index, r.futures.size());
        ASSERT_TRUE(r.futures[r.index].is_ready());
        taken.hit(static_cast<std::size_t>(r.futures[r.index].get()));
        r.futures.erase(r.futures.begin() + static_cast<std::ptrdiff_t>(r.index));
        pending = std::move(r.futures);
      }
    }
    EXPECT_EQ(taken.wrong(), 0u);
  }
}

TEST(FutureLifetimeStress, LeftoversReAwaitedThroughThenAndWhenAll) {
  // Each round: when_any over four, then the three leftovers go on through then() and
  // when_all while their promises are being completed from other threads.
  heist::executor ex(2);
  const int rounds = static_cast<int>(heist_test::scaled(3000));
  for (int r = 0; r < rounds; ++r) {
    std::vector<heist::promise<int>> ps(4);
    std::vector<heist::future<int>> fs;
    for (auto& p : ps)
      fs.push_back(p.get_future());
    auto any = heist::when_any(std::move(fs));
    shuffled_setters setters(ps, 2, static_cast<unsigned>(r));
    auto first = any.get();
    std::vector<heist::future<int>> doubled;
    for (std::size_t i = 0; i < 4; ++i) {
      if (i == first.index) continue;
      doubled.push_back(std::move(first.futures[i]).then([](int v) { return 2 * v; }));
    }
    int sum = first.futures[first.index].get() * 2;
    for (auto& f : heist::when_all(std::move(doubled)).get())
      sum += f.get();
    ASSERT_EQ(sum, 2 * (0 + 1 + 2 + 3)) << "round " << r;
  }
}

TEST(FutureLifetimeStress, ExecutorsDestroyedWhileTheirWaitersWaitOnOutsidePromises) {
  const int rounds = static_cast<int>(heist_test::scaled(300));
  std::atomic<long> ended{0};  // continuations and coroutines that ran or ended closed
  long expected = 0;
  for (int r = 0; r < rounds; ++r) {
    const std::size_t n = 8;
    std::vector<heist::promise<int>> ps(n);
    std::vector<heist::future<int>> thens;
    std::vector<heist::future<void>> coros;
    std::atomic<int> started{0};
    auto* ex = new heist::executor(2);
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 2 == 0) {
        thens.push_back(ps[i].get_future().then(*ex, [](int v) { return v; }));
      } else {
        auto body = [](heist::future<int> f, std::atomic<int>* began,
                       std::atomic<long>* done) -> heist::task<void> {
          began->fetch_add(1);
          (void)co_await std::move(f);
          done->fetch_add(1);
        };
        coros.push_back(heist::start(*ex, body(ps[i].get_future(), &started, &ended)));
      }
    }
    expected += static_cast<long>(coros.size());
    {
      // Completion races the destruction: some values arrive while the executor still runs.
      shuffled_setters setters(ps, 2, static_cast<unsigned>(r));
      if (r % 3 != 0) {
        while (started.load() < static_cast<int>(coros.size()))
          std::this_thread::yield();
      }
      delete ex;
    }
    for (auto& f : thens) {
      try {
        (void)f.get();
      } catch (const heist::executor_closed&) {
      }
      ended.fetch_add(1);
    }
    expected += static_cast<long>(thens.size());
    for (auto& f : coros)
      f.get();  // each body ran to its end once: on the executor, or on its completer
  }
  EXPECT_EQ(ended.load(), expected);
}
