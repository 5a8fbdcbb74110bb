// heist-bench's charts (report.hpp, write_charts): one SVG per family, drawn by svg.hpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "report.hpp"
#include "row_math.hpp"
#include "svg.hpp"
#include "workloads/fork_join.hpp"

namespace bench {
namespace {

int fib_n_of(const std::string& workload) {
  int n = 0;
  return std::sscanf(workload.c_str(), "fib(%d)", &n) == 1 ? n : -1;
}

}  // namespace

std::vector<std::string> write_charts(const config& cfg, const std::vector<result>& rs) {
  std::vector<std::string> charts;
  const auto save = [&](const std::string& file, const std::string& svg_text) {
    std::ofstream(cfg.out + "/" + file) << svg_text;
    charts.push_back(file);
  };
  // Speedup over serial, fork-join workloads, per backend and thread count.
  {
    svg::bar_chart c{
        "Fork-join: speedup over serial code (higher is better)", "x serial", {}, {}, {}};
    std::set<std::string> backends;
    for (const result& r : rs) {
      if (r.group == "fork-join" && r.backend != "serial") backends.insert(r.backend);
    }
    c.series.assign(backends.begin(), backends.end());
    c.values.assign(c.series.size(), {});
    for (const std::string& w : workloads_in_order(rs)) {
      for (int t : cfg.threads) {
        bool any = false;
        std::vector<double> col;
        for (const std::string& b : c.series) {
          const result* r = find_result(rs, w, b, t);
          const double v =
              r != nullptr && r->group == "fork-join" ? speedup_over_serial(rs, *r) : std::nan("");
          any = any || !std::isnan(v);
          col.push_back(v);
        }
        if (!any) continue;
        c.categories.push_back(w + " @" + std::to_string(t));
        for (std::size_t s = 0; s < col.size(); ++s)
          c.values[s].push_back(col[s]);
      }
    }
    if (!c.categories.empty()) save("speedup.svg", c.render());
  }
  // Time per spawn on fib.
  {
    svg::bar_chart c{"fib: time per spawn (lower is better)", "ns per spawn", {}, {}, {}};
    std::set<std::string> backends;
    for (const result& r : rs) {
      if (fib_n_of(r.workload) > 0 && r.backend != "serial") backends.insert(r.backend);
    }
    c.series.assign(backends.begin(), backends.end());
    c.values.assign(c.series.size(), {});
    for (const std::string& w : workloads_in_order(rs)) {
      const int n = fib_n_of(w);
      if (n <= 0) continue;
      for (int t : cfg.threads) {
        c.categories.push_back(w + " @" + std::to_string(t));
        for (std::size_t s = 0; s < c.series.size(); ++s) {
          const result* r = find_result(rs, w, c.series[s], t);
          c.values[s].push_back(r != nullptr
                                    ? r->stats.median * 1e6 / static_cast<double>(fib_spawns(n))
                                    : std::nan(""));
        }
      }
    }
    if (!c.categories.empty()) save("spawn-overhead.svg", c.render());
  }
  // The uneven, hotspot and idle-stealing loads: time per workload with and without
  // stealing, at the most threads.
  {
    const int t = *std::max_element(cfg.threads.begin(), cfg.threads.end());
    svg::bar_chart c{"Uneven, hotspot and idle-stealing loads at " + std::to_string(t) +
                         " threads (lower is better)",
                     "ms",
                     {},
                     {},
                     {}};
    std::set<std::string> backends;
    for (const result& r : rs) {
      if (r.group == "uneven loads" && r.threads == t) backends.insert(r.backend);
    }
    c.series.assign(backends.begin(), backends.end());
    c.values.assign(c.series.size(), {});
    for (const std::string& w : workloads_in_order(rs)) {
      bool uneven = false;
      for (const result& r : rs)
        uneven = uneven || (r.workload == w && r.group == "uneven loads");
      if (!uneven) continue;
      c.categories.push_back(w);
      for (std::size_t s = 0; s < c.series.size(); ++s) {
        const result* r = find_result(rs, w, c.series[s], t);
        c.values[s].push_back(r != nullptr ? r->stats.median : std::nan(""));
      }
    }
    if (!c.categories.empty()) save("uneven-loads.svg", c.render());
  }
  // Service figures: one chart per unit (idle CPU, wake-up latency, submission rate, trickle).
  for (const char* w : {"idle cost (2 s)", "wake-up latency", "trickle 20us/200us"}) {
    svg::bar_chart c{std::string(w) + " (lower is better)", "", {w}, {}, {}};
    for (const result& r : rs) {
      if (r.workload != w) continue;
      c.y_label = r.unit;
      c.series.push_back(r.backend);
      c.values.push_back({r.stats.median});
    }
    if (c.series.empty()) continue;
    std::string file = std::string("service-") + w + ".svg";
    for (char& ch : file) {
      if (ch == ' ' || ch == '/' || ch == '(' || ch == ')') ch = '-';
    }
    save(file, c.render());
  }

  // One bar per backend for each workload of `group` measured in `unit` (and each thread
  // count, where the run has several).
  const auto group_chart = [&](const std::string& title, const std::string& group,
                               const std::string& unit, const std::string& file) {
    svg::bar_chart c{title, unit, {}, {}, {}};
    std::vector<std::pair<std::string, int>> columns;  // workload, threads
    std::vector<std::string> backends;
    std::set<int> thread_counts;
    for (const result& r : rs) {
      if (r.group != group || r.unit != unit) continue;
      const std::pair<std::string, int> col{r.workload, r.threads};
      if (std::find(columns.begin(), columns.end(), col) == columns.end()) columns.push_back(col);
      if (std::find(backends.begin(), backends.end(), r.backend) == backends.end())
        backends.push_back(r.backend);
      thread_counts.insert(r.threads);
    }
    for (const auto& [w, t] : columns)
      c.categories.push_back(thread_counts.size() > 1 ? w + " @" + std::to_string(t) : w);
    for (const std::string& b : backends) {
      c.series.push_back(b);
      std::vector<double> v;
      for (const auto& [w, t] : columns) {
        const result* r = find_result(rs, w, b, t);
        v.push_back(r != nullptr && r->group == group ? r->stats.median : std::nan(""));
      }
      c.values.push_back(v);
    }
    if (!c.categories.empty()) save(file, c.render());
  };
  // Priorities and idle threads: start latencies (us).
  group_chart("Priorities and idle threads: start latency (lower is better)", "sizing", "us",
              "sizing-latency.svg");
  // Loops: every schedule of each loop workload (the EPCC loops, small loops, vector add, sum).
  group_chart("Parallel loops (lower is better)", "loops", "ms", "loops.svg");
  // Parallel algorithms: sort, scan, for_each with a feeder, combinable.
  group_chart("Parallel algorithms (lower is better)", "algorithms", "ms", "algorithms.svg");
  // Coroutine fib in both forms beside task_group fib, oneTBB and libfork; when_all fan-in.
  group_chart("Coroutines and futures (lower is better)", "async", "ms", "async.svg");
  // Peak resident memory per workload (a fresh process per bar).
  group_chart("Peak resident memory per workload (lower is better)", "memory", "MiB", "memory.svg");

  // MPI: Jacobi with and without overlap (ms per step).
  {
    svg::bar_chart c{"Jacobi over MPI: blocking exchange against overlap (lower is better)",
                     "ms / step",
                     {},
                     {"heist"},
                     {}};
    c.values.assign(1, {});
    for (const result& r : rs) {
      if (r.group != "mpi" || r.unit != "ms/step") continue;
      c.categories.push_back(r.workload);
      c.values[0].push_back(r.stats.median);
    }
    if (!c.categories.empty()) save("mpi-jacobi.svg", c.render());
  }

  // Graphs and pipelines: heist's time as a fraction of oneTBB's (for rates, oneTBB's rate
  // over heist's), one bar per workload and thread count; below 1, heist is faster.
  {
    svg::bar_chart c{"Task graphs and pipelines: heist's time / oneTBB's (below 1: heist faster)",
                     "heist / oneTBB",
                     {},
                     {"heist"},
                     {}};
    c.reference = 1.0;
    c.values.assign(1, {});
    for (const std::string& w : workloads_in_order(rs)) {
      for (int t : cfg.threads) {
        const result* h = find_result(rs, w, "heist", t);
        const result* o = find_result(rs, w, "oneTBB", t);
        if (h == nullptr || o == nullptr || (h->group != "graphs" && h->group != "pipelines")) {
          continue;
        }
        if (h->stats.median <= 0 || o->stats.median <= 0) continue;
        const double v = h->lower_is_better ? h->stats.median / o->stats.median
                                            : o->stats.median / h->stats.median;
        c.categories.push_back(w + " @" + std::to_string(t));
        c.values[0].push_back(v);
      }
    }
    if (!c.categories.empty()) save("graphs-pipelines.svg", c.render());
  }

  return charts;
}

}  // namespace bench
