// Asynchronous composition: a then-chain's cost per link, when_all fan-in, coroutine fib in
// two forms (co_await group.join(), and start() + co_await on its future) against heist's
// task_group fib, oneTBB's and (when built with its source) libfork's coroutine fib, the
// latency of resuming a suspended coroutine from a promise fulfilled outside the pool, and the
// memory a suspended coroutine costs.
#include <heist/heist.hpp>

#include <malloc.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "../harness.hpp"
#include "../workloads/fork_join.hpp"
#if HEIST_BENCH_HAVE_LIBFORK
#include "../backends/libfork_fib.hpp"
#endif

namespace bench {
namespace {

heist::task<void> coro_fib(int n, long& out) {
  if (n < 2) {
    out = n;
    co_return;
  }
  long a = 0, b = 0;
  heist::task_group g;
  g.run(coro_fib(n - 1, a));
  co_await coro_fib(n - 2, b);
  co_await g.join();
  out = a + b;
}

// The same fib, each fork a start() whose future the parent awaits.
heist::task<long> started_fib(int n) {
  if (n < 2) co_return n;
  heist::future<long> a = heist::start(started_fib(n - 1));
  const long b = co_await started_fib(n - 2);
  co_return co_await std::move(a) + b;
}

heist::task<void> await_and_stamp(std::vector<heist::future<int>>& fs,
                                  std::vector<std::atomic<std::int64_t>>& stamps) {
  for (std::size_t i = 0; i < fs.size(); ++i) {
    (void)co_await fs[i];
    stamps[i].store(clock_type::now().time_since_epoch().count(), std::memory_order_release);
  }
}

heist::task<void> suspended(heist::future<int> f, std::atomic<long>& sum) {
  sum.fetch_add(co_await std::move(f), std::memory_order_relaxed);
}

long heap_in_use_kib() {
  return static_cast<long>(mallinfo2().uordblks / 1024);
}

void add_row(context& x, result r) {
  r.stats = summarize(r.samples);
  print_progress(r);
  x.results.push_back(std::move(r));
}

void async_workloads(context& x) {
  const int most = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  const int reps = x.cfg.reps_or(5, 11);

  if (x.wants("coro-memory")) {
    // 100,000 coroutines suspended on their own promise's future, members of one group: heap
    // bytes in use per suspended coroutine (its frame, and the state of the future it awaits,
    // with the promise's slot in a vector), from malloc's
    // own count. Measured first in this family, before other coroutines fill the threads'
    // frame caches (resident memory says nothing here: freed memory of earlier workloads is
    // reused).
    const std::size_t n = 100000;
    heist::executor ex(static_cast<std::size_t>(most));
    std::atomic<long> sum{0};
    const long before = heap_in_use_kib();
    std::vector<heist::promise<int>> ps(n);  // counted: each coroutine's awaited future state
    heist::task_group g(ex);
    for (std::size_t i = 0; i < n; ++i)
      g.run(suspended(ps[i].get_future(), sum));
    ex.wait_idle();
    const long after = heap_in_use_kib();
    for (std::size_t i = 0; i < n; ++i)
      ps[i].set_value(1);
    g.wait();
    if (sum.load() != static_cast<long>(n)) std::exit(1);
    result r{"async", "memory per suspended coroutine", "heist", most, "bytes", true};
    r.samples.push_back(static_cast<double>(after - before) * 1024.0 / static_cast<double>(n));
    char note[64];
    std::snprintf(note, sizeof note, "%.0f MiB for 1e6", (after - before) * 10.0 / 1024.0);
    r.note = note;
    add_row(x, std::move(r));

    // 1e6 coroutines start()ed, each suspended on its own promise's future: everything they
    // hold, all told (the frame, the promise's state, start()'s future state), counted from
    // the promises' creation on; the vectors holding promises and futures are not counted.
    const std::size_t m = 1'000'000;
    std::vector<heist::promise<int>> promises;
    promises.reserve(m);
    std::vector<heist::future<void>> started;
    started.reserve(m);
    sum = 0;
    const long start_before = heap_in_use_kib();
    for (std::size_t i = 0; i < m; ++i) {
      promises.emplace_back();
      started.push_back(heist::start(ex, suspended(promises.back().get_future(), sum)));
    }
    ex.wait_idle();
    const long start_after = heap_in_use_kib();
    for (auto& p : promises)
      p.set_value(1);
    for (auto& f : started)
      f.get();
    if (sum.load() != static_cast<long>(m)) std::exit(1);
    result rs{"async", "memory per started coroutine suspended on a promise",
              "heist", most,
              "bytes", true};
    rs.samples.push_back(static_cast<double>(start_after - start_before) * 1024.0 /
                         static_cast<double>(m));
    std::snprintf(note, sizeof note, "%.0f MiB for 1e6", (start_after - start_before) / 1024.0);
    rs.note = note;
    add_row(x, std::move(rs));
  }
  if (x.wants("then-chain")) {
    // A chain of 100,000 then() links on a promise, built and completed inside a task of the
    // pool; timed from set_value to get() returning: the cost of running one link.
    result r{"async", "then-chain: 100,000 links, per link", "heist", most, "ns", true};
    heist_backend b(most);
    for (int rep = 0; rep <= reps; ++rep) {
      double ns = 0;
      b.run([&] {
        const long links = 100000;
        heist::promise<long> p;
        heist::future<long> f = p.get_future();
        for (long i = 0; i < links; ++i)
          f = f.then([](long v) { return v + 1; });
        const auto t0 = clock_type::now();
        p.set_value(0);
        const long v = f.get();
        ns = seconds_since(t0) * 1e9 / static_cast<double>(links);
        if (v != links) std::exit(1);
      });
      if (rep > 0) r.samples.push_back(ns);
    }
    add_row(x, std::move(r));
  }

  if (x.wants("when-all")) {
    result r{"async", "when_all fan-in of 100,000 futures", "heist", most, "ms", true};
    heist_backend b(most);
    for (int rep = 0; rep <= reps; ++rep) {
      double ms = 0;
      b.run([&] {
        const std::size_t n = 100000;
        std::vector<heist::promise<std::size_t>> ps(n);
        std::vector<heist::future<std::size_t>> fs;
        fs.reserve(n);
        const auto t0 = clock_type::now();
        for (auto& p : ps)
          fs.push_back(p.get_future());
        auto all = heist::when_all(std::move(fs));
        for (std::size_t i = 0; i < n; ++i)
          ps[i].set_value(i);
        auto done = all.get();
        ms = seconds_since(t0) * 1e3;
        if (done.size() != n) std::exit(1);
      });
      if (rep > 0) r.samples.push_back(ms);
    }
    add_row(x, std::move(r));
  }

  if (x.wants("coro-fib")) {
    for (const int threads : x.cfg.threads) {
      // Side by side, interleaved: coroutine fib with co_await group.join(), the same with
      // start() + co_await, heist's task_group fib, oneTBB's task_group fib, libfork's coroutine
      // fib (when built with it). The caller of each only waits.
      const int n = x.cfg.full ? 32 : 30;
      const long expected = fib<serial_backend>(n);
      const std::string name = "fib(" + std::to_string(n) + ") as coroutines";
      result rc{"async", name, "heist coroutines", threads, "ms", true};
      result rs{"async", name, "heist start+co_await", threads, "ms", true};
      result rh{"async", name, "heist", threads, "ms", true};
#if HEIST_BENCH_HAVE_TBB
      result rt{"async", name, "oneTBB", threads, "ms", true};
#endif
#if HEIST_BENCH_HAVE_LIBFORK
      result rl{"async", name, "libfork", threads, "ms", true};
      libfork_runner lf(threads);
#endif
      heist_backend hb(threads);
      for (int rep = 0; rep <= reps; ++rep) {
        long v = 0;
        double s = time_once([&] { hb.run([&] { heist::sync_wait(coro_fib(n, v)); }); });
        if (v != expected) std::exit(1);
        if (rep > 0) rc.samples.push_back(s * 1e3);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        s = time_once([&] { hb.run([&] { v = heist::sync_wait(started_fib(n)); }); });
        if (v != expected) std::exit(1);
        if (rep > 0) rs.samples.push_back(s * 1e3);
#if HEIST_BENCH_HAVE_LIBFORK
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        s = time_once([&] { v = lf.fib(n); });
        if (v != expected) std::exit(1);
        if (rep > 0) rl.samples.push_back(s * 1e3);
#endif
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        s = time_once([&] { hb.run([&] { v = fib<heist_backend>(n); }); });
        if (v != expected) std::exit(1);
        if (rep > 0) rh.samples.push_back(s * 1e3);
#if HEIST_BENCH_HAVE_TBB
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        tbb_backend tb(threads);
        s = time_once([&] { tb.run([&] { v = fib<tbb_backend>(n); }); });
        if (v != expected) std::exit(1);
        if (rep > 0) rt.samples.push_back(s * 1e3);
#endif
      }
      // The coroutine forms' ratios, round by round (ratio_by_round): start+co_await over the
      // group-join form, and the group-join form over libfork's.
      char note[96];
      std::snprintf(note, sizeof note, "/ group-join coroutines %.2f",
                    ratio_by_round(rs, rc).median);
      rs.note = note;
#if HEIST_BENCH_HAVE_LIBFORK
      std::snprintf(note, sizeof note, "heist coroutines / libfork %.2f",
                    ratio_by_round(rc, rl).median);
      rc.note = note;
#endif
      add_row(x, std::move(rc));
      add_row(x, std::move(rs));
      add_row(x, std::move(rh));
#if HEIST_BENCH_HAVE_TBB
      add_row(x, std::move(rt));
#endif
#if HEIST_BENCH_HAVE_LIBFORK
      add_row(x, std::move(rl));
#endif
    }
  }

  if (x.wants("ping-pong")) {
    // A coroutine awaits futures one by one; a thread outside the pool fulfils each after
    // 2 ms (the pool has gone to sleep): the time from set_value to the coroutine running.
    const std::size_t rounds = x.cfg.full ? 1000 : 300;
    heist::executor ex(static_cast<std::size_t>(most));
    std::vector<heist::promise<int>> ps(rounds);
    std::vector<heist::future<int>> fs;
    for (auto& p : ps)
      fs.push_back(p.get_future());
    std::vector<std::atomic<std::int64_t>> stamps(rounds);
    heist::future<void> done = heist::start(ex, await_and_stamp(fs, stamps));
    result r{"async", "ping-pong: outside promise -> coroutine resumed", "heist", most, "us", true};
    for (std::size_t i = 0; i < rounds; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const std::int64_t t0 = clock_type::now().time_since_epoch().count();
      ps[i].set_value(0);
      std::int64_t t1 = 0;
      while ((t1 = stamps[i].load(std::memory_order_acquire)) == 0) {
      }
      r.samples.push_back(static_cast<double>(t1 - t0) / 1e3);
    }
    done.get();
    char note[64];
    std::snprintf(note, sizeof note, "p99 %.1f us", quantile(r.samples, 0.99));
    r.note = note;
    add_row(x, std::move(r));
  }
}

const register_family k_registered{
    {55,
     "async",
     {"then-chain", "when-all", "coro-fib", "ping-pong", "coro-memory"},
     &async_workloads}};

}  // namespace
}  // namespace bench
