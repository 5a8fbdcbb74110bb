// heist-bench --trace: one traced heist run per workload, as JSON and an SVG timeline.
#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "../harness.hpp"
#include "../workloads/fork_join.hpp"
#include "../workloads/uneven_loads.hpp"

namespace bench {
namespace {

void write_traces(context& x) {
  if (!x.cfg.trace) return;
  const int threads = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  struct traced {
    const char* name;
    std::function<void(heist_backend&)> run;
  };
  const std::vector<std::int64_t> costs = heavy_tailed_costs(2000, 20000.0);
  const std::vector<traced> runs = {
      {"fib", [](heist_backend& b) { b.run([] { do_not_optimize(fib<heist_backend>(20)); }); }},
      {"uneven", [&](heist_backend& b) { b.run([&] { uneven_load<heist_backend>(costs); }); }},
      {"hotspot", [](heist_backend& b) { b.run([] { hotspot<heist_backend>(500, 50000); }); }},
      {"nqueens",
       [](heist_backend& b) {
         b.run([] { do_not_optimize(nqueens<heist_backend>(9, 0, 0, 0, 0)); });
       }},
  };
  for (const traced& t : runs) {
    heist_backend b(threads, heist::steal_policy::sticky_random, true);
    t.run(b);
    b.exec().wait_idle();
    const std::string base = x.cfg.out + "/trace-" + t.name;
    {
      std::ofstream json(base + ".json");
      b.exec().write_trace(json);
    }
    std::ifstream in(base + ".json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream svg(base + ".svg");
    svg << render_trace_svg(
        text, std::string("heist trace: ") + t.name + ", " + std::to_string(threads) + " workers");
    std::printf("trace: %s.json, %s.svg\n", base.c_str(), base.c_str());
  }
}

const register_family k_registered{{90, "traces", {}, &write_traces}};

}  // namespace
}  // namespace bench
