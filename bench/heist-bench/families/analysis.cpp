// heist-bench --analyze: heist::analyze on the fork-join workloads and a wavefront graph (work,
// span, parallelism, the predicted speedup at 2 to 256 threads, a chart each), then the
// prediction against measured two-thread speedups on three programs whose structure, not
// this machine's noise, decides them: fib, a wavefront of 20 us nodes, two branches of 60
// and 30 ms.
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <latch>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../harness.hpp"
#include "../workloads/flow.hpp"
#include "../workloads/fork_join.hpp"
#include "../workloads/wavefront_graph.hpp"

namespace bench {
namespace {

struct analysed {
  std::string name;
  std::function<void()> body;  // runs on a thread of the analysed executor
};

// heist::analyze(ex, body) from a worker of `ex`, this thread blocking.
heist::scalability_report analyze_on_worker(heist::executor& ex,
                                            const std::function<void()>& body) {
  heist::scalability_report r;
  std::latch done(1);
  ex.post([&] {
    r = heist::analyze(ex, body);
    done.count_down();
  });
  done.wait();
  return r;
}

// A workload's name as a file name under --out: analysis-<name>.svg and .json.
std::string file_name_of(std::string name) {
  for (char& ch : name) {
    if (ch == ' ' || ch == '(' || ch == ')' || ch == ',' || ch == '.') ch = '-';
  }
  return name;
}

// Runs body on a worker of `ex` while this thread blocks (no helping): milliseconds.
double time_on(heist::executor& ex, const std::function<void()>& body) {
  std::latch done(1);
  double ms = 0;
  ex.post([&] {
    ms = time_once(body) * 1e3;
    done.count_down();
  });
  done.wait();
  return ms;
}

// A one-worker executor whose worker runs on CPU `cpu` (workers start on the creator's mask).
std::unique_ptr<heist::executor> pinned_executor(int cpu) {
  cpu_set_t old_mask, one;
  sched_getaffinity(0, sizeof old_mask, &old_mask);
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  const bool pinned = sched_setaffinity(0, sizeof one, &one) == 0;
  heist::executor_options o;
  o.num_workers = 1;
  o.name = "heist-pinned";
  auto ex = std::make_unique<heist::executor>(o);
  if (pinned) sched_setaffinity(0, sizeof old_mask, &old_mask);
  return ex;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void analyze_workloads(context& x) {
  if (!x.cfg.analyze) return;
  heist::executor& ex = shared_executor(2, heist::steal_policy::sticky_random);
  auto grid = std::make_shared<wavefront_grid>(16, 16, 20'000);
  auto graph = std::make_shared<heist::task_graph>();
  build_wavefront(*graph, *grid);
  auto sort_input = std::make_shared<std::vector<int>>(1'000'000);
  const std::size_t mm = 256;
  auto ma = std::make_shared<std::vector<double>>(mm * mm, 1.0);
  auto mb = std::make_shared<std::vector<double>>(mm * mm, 0.5);
  auto mc = std::make_shared<std::vector<double>>(mm * mm, 0.0);
  uts_params up;
  up.max_depth = 8;
  const std::vector<analysed> items = {
      {"fib(27)", [] { do_not_optimize(fib<heist_backend>(27)); }},
      {"nqueens(10)", [] { do_not_optimize(nqueens<heist_backend>(10, 0, 0, 0, 0)); }},
      {"skynet(1e5)", [] { do_not_optimize(skynet<heist_backend>(0, 100'000)); }},
      {"integrate(0..30)",
       [] { do_not_optimize(integrate<heist_backend>(0, integrand(0), 30, integrand(30), 0)); }},
      {"uts(geo,d=8)", [up] { do_not_optimize(uts<heist_backend>(up.seed, 0, up)); }},
      {"matmul(256)",
       [=] {
         matmul<heist_backend>({mc->data(), mm}, {ma->data(), mm}, {mb->data(), mm}, mm);
       }},
      {"quicksort(1e6)",
       [sort_input] {
         std::mt19937 rng(5);
         for (int& v : *sort_input)
           v = static_cast<int>(rng());
         quicksort<heist_backend>(sort_input->data(), sort_input->data() + sort_input->size());
       }},
      {"wavefront 16x16, 20 us nodes", [graph] { graph->run().get(); }},
  };
  std::printf("\nScalability analysis (heist::analyze, 2 workers): times in ms\n");
  std::printf("%-30s %10s %9s %11s %9s %8s %8s %8s %8s\n", "workload", "work", "span",
              "parallelism", "burdened", "p=2", "p=16", "p=64", "p=256");
  for (const analysed& a : items) {
    const heist::scalability_report r = analyze_on_worker(ex, a.body);
    std::printf("%-30s %10.2f %9.3f %11.1f %9.1f %8.2f %8.2f %8.2f %8.2f\n", a.name.c_str(),
                static_cast<double>(r.work.count()) * 1e-6,
                static_cast<double>(r.span.count()) * 1e-6, r.parallelism(),
                r.burdened_parallelism(), r.predicted_speedup(2), r.predicted_speedup(16),
                r.predicted_speedup(64), r.predicted_speedup(256));
    const std::string file = file_name_of(a.name);
    std::ofstream svg(x.cfg.out + "/analysis-" + file + ".svg");
    r.write_svg(svg);
    std::ofstream json(x.cfg.out + "/analysis-" + file + ".json");
    r.write_json(json);
  }

  // The prediction against measured speedups. One-thread times: a one-worker executor pinned
  // to each CPU in turn, averaged (this VM's vCPUs differ in speed); two-thread times: two
  // workers. Medians of 3 interleaved rounds.
  const std::vector<analysed> checks = {
      {"fib(27)", [] { do_not_optimize(fib<heist_backend>(27)); }},
      {"wavefront 16x16, 20 us nodes", [graph] { graph->run().get(); }},
      {"two branches, 60 and 30 ms",
       [] {
         heist::parallel_invoke([] { spin_for_ns(60'000'000); }, [] { spin_for_ns(30'000'000); });
       }},
  };
  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::unique_ptr<heist::executor>> ones;
  for (int cpu = 0; cpu < std::min(cpus, 2); ++cpu)
    ones.push_back(pinned_executor(cpu));
  heist::executor_options o2;
  o2.num_workers = 2;
  o2.name = "heist-2";
  heist::executor two(o2);
  std::printf("\nPredicted against measured speedup at 2 threads (medians of 3 rounds)\n");
  std::printf("%-30s %10s %10s %10s %10s %10s %10s\n", "program", "T1 (ms)", "T2 (ms)", "measured",
              "predicted", "bound", "pred/meas");
  for (const analysed& a : checks) {
    heist::scalability_report r = analyze_on_worker(ex, a.body);
    std::vector<double> t1, t2;
    for (int round = 0; round < 3; ++round) {
      double one = 0;
      for (auto& e : ones)
        one += time_on(*e, a.body);
      t1.push_back(one / static_cast<double>(ones.size()));
      t2.push_back(time_on(two, a.body));
    }
    const double m1 = median_of(t1), m2 = median_of(t2);
    const double measured = m1 / m2;
    std::printf("%-30s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", a.name.c_str(), m1, m2,
                measured, r.predicted_speedup(2), r.speedup_bound(2),
                r.predicted_speedup(2) / measured);
    // The chart with the measured points beside the prediction.
    r.measured = {{1, 1.0}, {2, measured}};
    std::ofstream svg(x.cfg.out + "/analysis-measured-" + file_name_of(a.name) + ".svg");
    r.write_svg(svg);
  }
}

const register_family k_registered{{95, "analysis", {}, &analyze_workloads}};

}  // namespace
}  // namespace bench
