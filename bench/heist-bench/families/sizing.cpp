// Section 12: arena priorities and idle threads.
//   priority: the start latency of a task enqueued into a high-priority task_arena, on an
//     idle pool and on a pool whose every worker runs a flood of 20 us tasks of a
//     low-priority arena (oneTBB's task_arena priorities side by side when installed);
//   idle-threads: the wake-up latency of a submission when the workers have retired after
//     idle_timeout (thread start included) against a parked pool, and the threads left after
//     1 s idle with idle_timeout 100 ms.
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <heist/heist.hpp>
#if HEIST_BENCH_HAVE_TBB
#include <tbb/task_arena.h>
#endif
#include "../harness.hpp"

namespace bench {
namespace {

void add_latency_row(context& x, result r) {
  char note[64];
  std::snprintf(note, sizeof note, "p99 %.1f us", quantile(r.samples, 0.99));
  r.note = note;
  r.stats = summarize(r.samples);
  print_progress(r);
  x.results.push_back(std::move(r));
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch())
      .count();
}

// Threads named "idlebench-INDEX": the workers of the executor below (by name, so that
// threads a runtime starts lazily do not count).
std::size_t threads_in_process() {
  std::size_t n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      n += name.rfind("idlebench-", 0) == 0;
    }
    closedir(d);
  }
  return n;
}

// Start latency of `rounds` tasks given to `enqueue` one at a time, 1 ms apart, in us.
template <class Enqueue>
std::vector<double> start_latencies(std::size_t rounds, Enqueue&& enqueue) {
  std::vector<double> us;
  for (std::size_t i = 0; i < rounds; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::atomic<std::int64_t> started{0};
    const std::int64_t t0 = now_ns();
    enqueue([&started] { started.store(now_ns(), std::memory_order_release); });
    std::int64_t t1 = 0;
    while ((t1 = started.load(std::memory_order_acquire)) == 0)
      std::this_thread::yield();
    us.push_back(static_cast<double>(t1 - t0) / 1e3);
  }
  return us;
}

// A flood of 20 us tasks that re-enqueue themselves into `arena` until `stop`.
template <class Arena>
struct flood {
  Arena* arena;
  std::atomic<bool>* stop;
  void operator()() const {
    const auto until = clock_type::now() + std::chrono::microseconds(20);
    while (clock_type::now() < until) {
    }
    if (!stop->load(std::memory_order_relaxed)) arena->enqueue(*this);
  }
};

void sizing_workloads(context& x) {
  const int most = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  const std::size_t rounds = x.cfg.full ? 1000 : 300;

  if (x.wants("priority")) {
    const std::size_t n = static_cast<std::size_t>(most);
    {
      heist::executor ex(n);
      heist::task_arena high(1, ex, heist::priority::high);
      result idle{"sizing", "high-priority task start: idle pool", "heist", most, "us", true};
      idle.samples = start_latencies(rounds, [&](auto f) { high.enqueue(f); });
      add_latency_row(x, std::move(idle));
      heist::task_arena low(n, ex, heist::priority::low);
      std::atomic<bool> stop{false};
      for (std::size_t i = 0; i < 2 * n; ++i)
        low.enqueue(flood<heist::task_arena>{&low, &stop});
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      result busy{"sizing", "high-priority task start: low-priority flood", "heist", most, "us",
                  true};
      busy.samples = start_latencies(rounds, [&](auto f) { high.enqueue(f); });
      stop = true;
      ex.wait_idle();
      add_latency_row(x, std::move(busy));
    }
#if HEIST_BENCH_HAVE_TBB
    {
      tbb::task_arena high(1, 1, tbb::task_arena::priority::high);
      tbb::task_arena low(most, 0, tbb::task_arena::priority::low);
      result idle{"sizing", "high-priority task start: idle pool", "oneTBB", most, "us", true};
      idle.samples = start_latencies(rounds, [&](auto f) { high.enqueue(f); });
      add_latency_row(x, std::move(idle));
      std::atomic<bool> stop{false};
      for (int i = 0; i < 2 * most; ++i)
        low.enqueue(flood<tbb::task_arena>{&low, &stop});
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      result busy{"sizing", "high-priority task start: low-priority flood", "oneTBB", most, "us",
                  true};
      busy.samples = start_latencies(rounds, [&](auto f) { high.enqueue(f); });
      stop = true;
      add_latency_row(x, std::move(busy));
      // Let the flood drain before the arenas go.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
#endif
  }

  if (x.wants("idle-threads")) {
    const std::size_t n = static_cast<std::size_t>(most);
    const std::size_t restarts = x.cfg.full ? 100 : 30;
    {
      // Parked: the submission wakes a sleeping worker.
      heist::executor ex(n);
      result r{"sizing", "wake-up: parked pool", "heist", most, "us", true};
      r.samples = start_latencies(rounds, [&](auto f) { ex.post(f); });
      add_latency_row(x, std::move(r));
    }
    {
      heist::executor_options o;
      o.num_workers = n;
      o.idle_timeout = std::chrono::milliseconds(100);
      o.max_blocking_threads = 0;
      o.name = "idlebench";
      const std::size_t before = 0;
      heist::executor ex(o);
      ex.submit([] {}).get();
      std::this_thread::sleep_for(std::chrono::seconds(1));
      result left{"sizing",  "worker threads left after 1 s idle (idle_timeout 100 ms)",
                  "heist",   most,
                  "threads", true};
      left.samples.push_back(static_cast<double>(threads_in_process() - before));
      left.stats = summarize(left.samples);
      print_progress(left);
      x.results.push_back(std::move(left));
      // Retired: the submission starts a thread. Each round waits until every worker is gone.
      result r{"sizing", "wake-up: retired pool (thread start)", "heist", most, "us", true};
      for (std::size_t i = 0; i < restarts; ++i) {
        const auto deadline = clock_type::now() + std::chrono::seconds(2);
        while (threads_in_process() > before && clock_type::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const auto one = start_latencies(1, [&](auto f) { ex.post(f); });
        r.samples.push_back(one[0]);
      }
      add_latency_row(x, std::move(r));
    }
  }
}

const register_family k_registered{{57, "sizing", {"priority", "idle-threads"}, &sizing_workloads}};

}  // namespace
}  // namespace bench
