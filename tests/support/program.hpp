// A random mixed workload, read from bytes, that checks itself: task groups with nested
// spawns, throwing tasks, cancels, futures, parallel_for / parallel_reduce with each
// partitioner, isolate, task_arena execute and enqueue, blocking. Each operation knows what
// must happen (how many tasks run, which exception a wait rethrows, the reduction's value,
// the arena's limit) and calls heist_test::program_failed on any difference. Used by the
// runtime fuzz target and by heist-soak.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace heist_test {

[[noreturn]] inline void program_failed(const char* what) {
  std::fprintf(stderr, "heist program check failed: %s\n", what);
  std::abort();
}

struct program_reader {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t pos = 0;
  bool more() const { return pos < size; }
  std::uint8_t next() { return pos < size ? data[pos++] : 0; }
};

struct program {
  heist::executor& ex;
  program_reader& in;
  int depth = 0;

  // A group of 0..15 tasks, each maybe spawning a nested group; some throw, some cancel.
  void group_op() {
    const std::uint8_t shape = in.next();
    const int n = shape % 16;
    const bool throws = (shape & 0x10) != 0;
    const int thrower = n > 0 ? in.next() % n : 0;
    std::atomic<int> ran{0};
    heist::task_group g(ex);
    for (int i = 0; i < n; ++i) {
      const bool nest = depth < 3 && (in.next() % 4 == 0);
      g.run([&, i, nest] {
        ran.fetch_add(1);
        if (throws && i == thrower) throw std::runtime_error("fuzz");
        if (nest) {
          heist::task_group inner;
          std::atomic<int> inner_ran{0};
          for (int k = 0; k < 3; ++k)
            inner.run([&] { inner_ran.fetch_add(1); });
          inner.wait();
          if (inner_ran.load() != 3 && !g.is_canceling())
            program_failed("nested group lost a task");
        }
      });
    }
    const bool cancel = (shape & 0x20) != 0;
    if (cancel) g.cancel();
    bool threw = false;
    try {
      g.wait();
    } catch (const std::runtime_error&) {
      threw = true;
    }
    if (threw && !throws) program_failed("wait rethrew an exception nobody threw");
    if (!cancel && throws && n > 0 && !threw) program_failed("wait lost the exception");
    if (!cancel && !throws && ran.load() != n) program_failed("a task of the group did not run");
    if (ran.load() > n) program_failed("a task ran twice");
  }

  void future_op() {
    const int v = in.next();
    auto f = ex.submit([v] {
      if (v % 7 == 0) throw std::logic_error("fuzz");
      return v * 2;
    });
    try {
      if (f.get() != v * 2) program_failed("future value");
      if (v % 7 == 0) program_failed("future lost the exception");
    } catch (const std::logic_error&) {
      if (v % 7 != 0) program_failed("future threw");
    }
  }

  void loop_op() {
    const std::uint8_t shape = in.next();
    const int n = (shape % 64) * ((shape & 0x40) ? 37 : 1);
    const std::size_t grain = 1 + in.next() % 8;
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
    auto body = [&](const heist::blocked_range<int>& r) {
      for (int i = r.begin(); i != r.end(); ++i)
        hits[static_cast<std::size_t>(i)].fetch_add(1);
    };
    heist::blocked_range<int> range(0, n, grain);
    heist::affinity_partitioner ap;
    parallel_for_with_partitioner(shape >> 6, ex, range, body, ap);
    for (auto& h : hits) {
      if (h.load() != 1) program_failed("parallel_for visited an index other than once");
    }
    const long sum = heist::parallel_reduce(
        ex, range, 0L,
        [](const heist::blocked_range<int>& r, long acc) {
          for (int i = r.begin(); i != r.end(); ++i)
            acc += i;
          return acc;
        },
        [](long a, long b) { return a + b; });
    if (sum != static_cast<long>(n) * (n - 1) / 2) program_failed("parallel_reduce value");
  }

  void arena_op() {
    const std::uint8_t shape = in.next();
    heist::task_arena arena(1 + shape % 3, ex);
    std::atomic<int> inside{0}, highest{0}, done{0};
    auto track = [&] {
      const int now = inside.fetch_add(1) + 1;
      int seen = highest.load();
      while (now > seen && !highest.compare_exchange_weak(seen, now)) {
      }
      inside.fetch_sub(1);
      done.fetch_add(1);
    };
    const int n = shape % 32;
    for (int i = 0; i < n / 2; ++i)
      arena.enqueue(track);
    arena.execute([&] { heist::parallel_for(0, n - n / 2, [&](int) { track(); }); });
    const int isolated = heist::isolate([&] { return arena.execute([] { return 5; }); });
    if (isolated != 5) program_failed("isolate/execute value");
    (void)heist::blocking([&] { return shape; });
    while (done.load() != n)
      std::this_thread::yield();
    if (highest.load() > static_cast<int>(arena.max_concurrency()))
      program_failed("arena limit exceeded");
  }

  void run() {
    while (in.more()) {
      switch (in.next() % 4) {
        case 0:
          group_op();
          break;
        case 1:
          future_op();
          break;
        case 2:
          loop_op();
          break;
        case 3:
          arena_op();
          break;
      }
    }
  }
};

}  // namespace heist_test
