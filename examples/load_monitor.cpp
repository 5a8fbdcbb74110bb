// The load monitor and tracing: an uneven workload, per-worker counters, and a Chrome
// trace (open trace.json in https://ui.perfetto.dev or chrome://tracing).
#include <heist/heist.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>

int main(int argc, char** argv) {
  heist::executor_options options;
  options.num_workers = 4;
  options.trace = true;
  heist::executor pool(options);

  pool.submit([] {
        heist::task_group g;
        for (int i = 0; i < 200; ++i) {
          g.run([i] {  // uneven costs: every 10th task is 20x longer
            const auto cost = std::chrono::microseconds(i % 10 == 0 ? 400 : 20);
            const auto until = std::chrono::steady_clock::now() + cost;
            while (std::chrono::steady_clock::now() < until) {
            }
          });
        }
        g.wait();
      })
      .get();

  // get() returns as soon as the submitted task's value is set, which is before its worker
  // counts it as executed; wait_idle() returns once every task finished, counters included.
  pool.wait_idle();
  const heist::executor_stats s = pool.stats();
  std::printf("worker  executed  stolen  attempts  failed  sleeps  queue\n");
  for (std::size_t w = 0; w < s.workers.size(); ++w) {
    const auto& k = s.workers[w];
    std::printf("%6zu  %8llu  %6llu  %8llu  %6llu  %6llu  %5zu\n", w,
                static_cast<unsigned long long>(k.executed),
                static_cast<unsigned long long>(k.stolen),
                static_cast<unsigned long long>(k.steal_attempts),
                static_cast<unsigned long long>(k.failed_steals),
                static_cast<unsigned long long>(k.sleeps), k.queue_length);
  }
  std::printf("queue lengths: max %zu min %zu mean %.2f; total executed %llu\n", s.max_queue,
              s.min_queue, s.mean_queue, static_cast<unsigned long long>(s.executed()));

  const char* path = argc > 1 ? argv[1] : "trace.json";
  std::ofstream out(path);
  pool.write_trace(out);
  std::printf("trace written to %s\n", path);
  return s.executed() == 201 ? 0 : 1;
}
