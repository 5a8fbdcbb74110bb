// Section 7: blocking calls (blocking() against a waiting task), task_arena::execute and
// isolate per call.
#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <vector>

#include "../workloads/arena_workloads.hpp"
#if HEIST_BENCH_HAVE_TBB
#include <tbb/task_arena.h>
#endif
#include "../harness.hpp"

namespace bench {
namespace {

void arena_workloads(context& x) {
  const int most = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  if (x.wants("mixed")) {
    // Keys: "heist" wraps the waits in heist::blocking, "heist-noblock" does not, "tbb" has
    // no equivalent (a waiting task holds its thread).
    const std::vector<backend_key> keys = {{"heist", true}, {"heist-noblock", true}, {"tbb", true}};
    const std::size_t tasks = x.cfg.full ? 400 : 200;
    timed_case_with(
        x,
        [](const std::string& k, int t, auto&& f) {
          if (k == "heist-noblock") {
            heist_backend b(t);
            b.set_blocking(false);
            f(b);
            return true;
          }
          return with_backend(k, t, f);
        },
        std::vector<int>{most}, "arenas", "mixed",
        "mixed: " + std::to_string(tasks / 2) + " x 1 ms wait + " + std::to_string(tasks / 2) +
            " x 1 ms compute",
        keys, x.cfg.reps_or(5, 9), tasks, nullptr,
        [&](auto& b) {
          using B = std::decay_t<decltype(b)>;
          std::uint64_t v = 0;
          bool use_blocking = false;
          if constexpr (std::is_same_v<B, heist_backend>) use_blocking = b.blocking_enabled();
          b.run([&] {
            v = mixed_io_compute<B>(tasks, std::chrono::milliseconds(1),
                                    std::chrono::milliseconds(1), [&](auto&& wait) {
                                      if (use_blocking) {
                                        heist::blocking(wait);
                                      } else {
                                        wait();
                                      }
                                    });
          });
          return v;
        });
  }
  if (x.wants("arena-cost")) {
    auto add = [&](const std::string& workload, const std::string& backend, double ns) {
      result r{"arenas", workload, backend, most, "ns", true};
      r.samples.push_back(ns);
      r.stats = summarize(r.samples);
      print_progress(r);
      x.results.push_back(std::move(r));
    };
    const std::size_t calls = x.cfg.full ? 1'000'000 : 200'000;
    for (int rep = 0; rep < 3; ++rep) {
      heist::executor ex(static_cast<std::size_t>(most));
      heist::task_arena arena(static_cast<std::size_t>(most), ex);
      const double exec_ns = ns_per_call(calls, [&] { arena.execute([] {}); });
      const double iso_ns = ns_per_call(calls, [&] { heist::isolate([] {}); });
      const double iso_worker_ns =
          ex.submit([&] { return ns_per_call(calls, [] { heist::isolate([] {}); }); }).get();
      if (rep == 2) {
        add("task_arena::execute per call", "heist", exec_ns);
        add("isolate per call", "heist", iso_ns);
        add("isolate per call (on a worker)", "heist", iso_worker_ns);
      }
    }
#if HEIST_BENCH_HAVE_TBB
    for (int rep = 0; rep < 3; ++rep) {
      tbb::task_arena arena(most);
      const double exec_ns = ns_per_call(calls, [&] { arena.execute([] {}); });
      const double iso_ns = ns_per_call(calls, [&] { tbb::this_task_arena::isolate([] {}); });
      if (rep == 2) {
        add("task_arena::execute per call", "oneTBB", exec_ns);
        add("isolate per call", "oneTBB", iso_ns);
      }
    }
#endif
  }
}

const register_family k_registered{{40, "arenas", {"mixed", "arena-cost"}, &arena_workloads}};

}  // namespace
}  // namespace bench
