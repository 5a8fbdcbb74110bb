// heist-bench output (see report.hpp).
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "mini_json.hpp"
#include "svg.hpp"
#include "workloads/fork_join.hpp"

namespace bench {
namespace {

// The reference row for ratios: heist at the same thread count.
const result* reference(const std::vector<result>& rs, const result& r) {
  return find_result(rs, r.workload, "heist", r.threads);
}

// this median / heist's median at the same thread count ("vs heist"); NaN without one.
double ratio_to_heist(const std::vector<result>& rs, const result& r) {
  const result* ref = reference(rs, r);
  return ref != nullptr && ref->stats.median > 0 ? r.stats.median / ref->stats.median
                                                 : std::nan("");
}

// serial time / this time, for timed workloads that have a serial row.
double speedup(const std::vector<result>& rs, const result& r) {
  const result* s = find_result(rs, r.workload, "serial", 1);
  if (s == nullptr || r.unit != "ms" || r.stats.median <= 0) return std::nan("");
  return s->stats.median / r.stats.median;
}

std::vector<std::string> workloads_in_order(const std::vector<result>& rs) {
  std::vector<std::string> order;
  for (const result& r : rs) {
    if (std::find(order.begin(), order.end(), r.workload) == order.end())
      order.push_back(r.workload);
  }
  return order;
}

std::string fmt(double v, int prec = 2) {
  if (std::isnan(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

int fib_n_of(const std::string& workload) {
  int n = 0;
  return std::sscanf(workload.c_str(), "fib(%d)", &n) == 1 ? n : -1;
}

}  // namespace

void print_header(const machine_info& m, const config& cfg) {
  std::printf("heist-bench: %s, %u cores, %s, %s\n", m.cpu_model.c_str(), m.cores,
              m.compiler.c_str(), m.os.c_str());
  std::printf("sizing: %s\n", m.sizing.c_str());
  std::printf("CPU speeds: %s\n", m.cpu_speeds_start.c_str());
  std::printf("atomics: %s\n", m.atomic_costs.c_str());
  std::printf("oneTBB %s, OpenMP %s, %s; mode %s; threads", m.tbb_version.c_str(),
              m.openmp_version.c_str(), m.date.c_str(), cfg.full ? "full" : "quick");
  for (int t : cfg.threads)
    std::printf(" %d", t);
  std::printf("\n\n");
}

void print_progress(const result& r) {
  std::printf("  %-22s %-22s %2d thr  median %10s %-8s [%s .. %s] n=%zu %s\n", r.workload.c_str(),
              r.backend.c_str(), r.threads, fmt(r.stats.median, 3).c_str(), r.unit.c_str(),
              fmt(r.stats.p10, 3).c_str(), fmt(r.stats.p90, 3).c_str(), r.stats.n, r.note.c_str());
  std::fflush(stdout);
}

void note_paired_scaling(std::vector<result>& rows) {
  for (result& r : rows) {
    if (r.threads <= 1 || r.unit != "ms" || r.samples.size() < 3) continue;
    const result* one = find_result(rows, r.workload, r.backend, 1);
    if (one == nullptr) continue;
    const summary s = ratio_by_round(*one, r);
    if (s.n == 0) continue;
    char b[96];
    std::snprintf(b, sizeof b, "T1/T%d %.2f (p10..p90 %.2f..%.2f)", r.threads, s.median, s.p10,
                  s.p90);
    add_note(r, b);
  }
}

void print_table(const std::vector<result>& rs) {
  std::printf("\n%-24s %3s  %-22s %12s %-9s %21s %9s %8s  %s\n", "workload", "thr", "backend",
              "median", "unit", "p10 .. p90", "vs heist", "speedup", "note");
  std::printf("%s\n", std::string(130, '-').c_str());
  for (const std::string& w : workloads_in_order(rs)) {
    for (const result& r : rs) {
      if (r.workload != w) continue;
      const double ratio = ratio_to_heist(rs, r);
      std::printf("%-24s %3d  %-22s %12s %-9s %10s .. %-9s %8s %8s  %s\n", r.workload.c_str(),
                  r.threads, r.backend.c_str(), fmt(r.stats.median, 3).c_str(), r.unit.c_str(),
                  fmt(r.stats.p10, 3).c_str(), fmt(r.stats.p90, 3).c_str(), fmt(ratio).c_str(),
                  fmt(speedup(rs, r)).c_str(), r.note.c_str());
    }
  }
  std::printf(
      "\nvs heist: this median / heist's median at the same thread count (for ms, us and cores, "
      "above 1 means heist is better; for Mtasks/s, below 1).\nspeedup: serial median / this "
      "median.\n");
}

void write_report(const config& cfg, const machine_info& m, const std::vector<result>& rs) {
  // --- CSV of every sample --------------------------------------------------------------
  {
    std::ofstream csv(cfg.out + "/results.csv");
    csv << "group,workload,backend,threads,unit,sample\n";
    for (const result& r : rs) {
      for (double s : r.samples) {
        csv << r.group << ",\"" << r.workload << "\",\"" << r.backend << "\"," << r.threads << ","
            << r.unit << "," << s << "\n";
      }
    }
  }

  // --- charts -----------------------------------------------------------------------------
  std::vector<std::string> charts;
  auto save = [&](const std::string& file, const std::string& svg_text) {
    std::ofstream(cfg.out + "/" + file) << svg_text;
    charts.push_back(file);
  };
  // Speedup over serial, fork-join workloads, per backend and thread count.
  {
    svg::bar_chart c{"Speedup over serial (fork-join)", "x serial", {}, {}, {}};
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
          const double v = r != nullptr && r->group == "fork-join" ? speedup(rs, *r) : std::nan("");
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
    svg::bar_chart c{"fib: time per spawn (ns), lower is better", "ns / spawn", {}, {}, {}};
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
  // The seed-001 table: time per workload with and without stealing, at the most threads.
  {
    const int t = *std::max_element(cfg.threads.begin(), cfg.threads.end());
    svg::bar_chart c{
        "Seed note 001 table at " + std::to_string(t) + " threads (ms, lower is better)",
        "ms",
        {},
        {},
        {}};
    std::set<std::string> backends;
    for (const result& r : rs) {
      if (r.group == "seed-001" && r.threads == t) backends.insert(r.backend);
    }
    c.series.assign(backends.begin(), backends.end());
    c.values.assign(c.series.size(), {});
    for (const std::string& w : workloads_in_order(rs)) {
      bool seed = false;
      for (const result& r : rs)
        seed = seed || (r.workload == w && r.group == "seed-001");
      if (!seed) continue;
      c.categories.push_back(w);
      for (std::size_t s = 0; s < c.series.size(); ++s) {
        const result* r = find_result(rs, w, c.series[s], t);
        c.values[s].push_back(r != nullptr ? r->stats.median : std::nan(""));
      }
    }
    if (!c.categories.empty()) save("seed-001.svg", c.render());
  }
  // Service figures: one chart per unit (idle CPU, wake-up latency, submission rate, trickle).
  for (const char* w : {"idle cost (2 s)", "wake-up latency", "trickle 20us/200us"}) {
    svg::bar_chart c{w, "", {w}, {}, {}};
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

  // One bar per backend for each workload of `group` measured in `unit`.
  const auto group_chart = [&](const std::string& title, const std::string& group,
                               const std::string& unit, const std::string& file) {
    svg::bar_chart c{title, unit, {}, {}, {}};
    std::vector<std::string> backends;
    for (const result& r : rs) {
      if (r.group != group || r.unit != unit) continue;
      if (std::find(c.categories.begin(), c.categories.end(), r.workload) == c.categories.end())
        c.categories.push_back(r.workload);
      if (std::find(backends.begin(), backends.end(), r.backend) == backends.end())
        backends.push_back(r.backend);
    }
    for (const std::string& b : backends) {
      c.series.push_back(b);
      std::vector<double> v;
      for (const std::string& w : c.categories) {
        double value = std::nan("");
        for (const result& r : rs)
          if (r.group == group && r.workload == w && r.backend == b) value = r.stats.median;
        v.push_back(value);
      }
      c.values.push_back(v);
    }
    if (!c.categories.empty()) save(file, c.render());
  };
  // Priorities and idle threads: start latencies (us).
  group_chart("Start latency (us): priorities and idle threads, lower is better", "sizing", "us",
              "sizing-latency.svg");
  // Loops: every schedule of each loop workload (the EPCC loops, small loops, vector add, sum).
  group_chart("Parallel loops (ms, lower is better)", "loops", "ms", "loops.svg");
  // Peak resident memory per workload (a fresh process per bar).
  group_chart("Peak resident memory (MiB) per workload, lower is better", "memory", "MiB",
              "memory.svg");

  // MPI: Jacobi with and without overlap (ms per step).
  {
    svg::bar_chart c{"Jacobi over MPI: ms per step, blocking exchange vs overlap (lower is better)",
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
    svg::bar_chart c{"Task graphs and pipelines: heist time / oneTBB time (lower is better)",
                     "x oneTBB",
                     {},
                     {"heist"},
                     {}};
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

  // --- report.md ------------------------------------------------------------------------------
  std::ofstream md(cfg.out + "/report.md");
  md << "# heist-bench report\n\n";
  md << "- machine: " << m.cpu_model << ", " << m.cores << " cores, " << m.os << "\n";
  md << "- sizing: " << m.sizing << "\n";
  md << "- CPU speeds at the start: " << m.cpu_speeds_start << "\n";
  md << "- CPU speeds at the end: " << m.cpu_speeds_end << "\n";
  md << "- atomics: " << m.atomic_costs << "\n";
  md << "- compiler: " << m.compiler << "; oneTBB " << m.tbb_version << "; OpenMP "
     << m.openmp_version << "\n";
  md << "- date: " << m.date << "; mode: " << (cfg.full ? "full" : "quick") << "; threads:";
  for (int t : cfg.threads)
    md << " " << t;
  md << "\n\nEach row is the median of its samples (a warm-up run is discarded; in the fork-join, "
        "loop, arena and seed-note rows every timed run comes right after an untimed one of the "
        "same row, so that it starts with the backend's threads awake); p10/p90 give "
        "the spread. `vs heist` divides by heist's median at the same thread count, measured in "
        "the same run. A heist row at 2 or more threads that keeps its workers busy says how many "
        "samples took over 1.1x its median and what its workers did in them: one idle (parked, or "
        "its thread preempted by the host: heist's to look at first), cores at different speeds "
        "or every core slower (the machine's). Raw samples: `results.csv`.\n";
  std::string group;
  for (const std::string& w : workloads_in_order(rs)) {
    const result* first = nullptr;
    for (const result& r : rs) {
      if (r.workload == w) {
        first = &r;
        break;
      }
    }
    if (first->group != group) {
      group = first->group;
      md << "\n## " << group << "\n";
    }
    md << "\n### " << w << "\n\n| threads | backend | median (" << first->unit
       << ") | p10 | p90 | vs heist | speedup | note |\n|---|---|---|---|---|---|---|---|\n";
    for (const result& r : rs) {
      if (r.workload != w) continue;
      const double ratio = ratio_to_heist(rs, r);
      md << "| " << r.threads << " | " << r.backend << " | " << fmt(r.stats.median, 3) << " | "
         << fmt(r.stats.p10, 3) << " | " << fmt(r.stats.p90, 3) << " | " << fmt(ratio) << " | "
         << fmt(speedup(rs, r)) << " | " << r.note << " |\n";
    }
  }
  md << "\n## Charts\n\n";
  for (const std::string& c : charts)
    md << "![" << c << "](" << c << ")\n\n";
  if (std::ifstream(cfg.out + "/graph-run.svg").good()) {
    md << "## One task graph run\n\nA 16x16 wavefront graph (20 us blocks) on heist, one lane "
          "per worker (`graph-run.json` is the trace, `graph-wavefront-4x4.dot` the DOT of a "
          "smaller grid):\n\n![graph-run.svg](graph-run.svg)\n";
  }
  std::printf("report: %s/report.md (%zu charts), samples: %s/results.csv\n", cfg.out.c_str(),
              charts.size(), cfg.out.c_str());
}

std::string render_trace_svg(const std::string& trace_json, const std::string& title) {
  const heist_tools::json doc = heist_tools::parse_json(trace_json);
  struct span {
    int tid;
    double ts, dur;
    bool stolen;
    int depth;
  };
  std::vector<span> spans;
  std::map<int, std::string> names;
  double t0 = std::numeric_limits<double>::max(), t1 = 0;
  for (const auto& e : doc["traceEvents"].items) {
    const std::string ph = e["ph"].str;
    if (ph == "M" && e["name"].str == "thread_name") {
      names[static_cast<int>(e["tid"].num)] = e["args"]["name"].str;
    } else if (ph == "X") {
      span s{static_cast<int>(e["tid"].num), e["ts"].num, e["dur"].num,
             e["args"]["kind"].str == "stolen", 0};
      t0 = std::min(t0, s.ts);
      t1 = std::max(t1, s.ts + s.dur);
      spans.push_back(s);
    }
  }
  // Nesting: a task that a helping wait ran inside another task on the same track is drawn
  // one row lower, like a flame chart, so the outer task does not hide it.
  std::sort(spans.begin(), spans.end(), [](const span& a, const span& b) {
    return a.tid != b.tid ? a.tid < b.tid : (a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur);
  });
  constexpr int k_max_rows = 6;
  std::map<int, int> rows_of;
  std::vector<double> open_ends;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (i == 0 || spans[i].tid != spans[i - 1].tid) open_ends.clear();
    while (!open_ends.empty() && open_ends.back() <= spans[i].ts)
      open_ends.pop_back();
    spans[i].depth = std::min(static_cast<int>(open_ends.size()), k_max_rows - 1);
    open_ends.push_back(spans[i].ts + spans[i].dur);
    rows_of[spans[i].tid] = std::max(rows_of[spans[i].tid], spans[i].depth + 1);
  }
  const double left = 170, width = 1400, row_h = 12, lane_gap = 8, top = 50;
  std::map<int, double> lane_y;
  double y = top;
  for (const auto& [tid, rows] : rows_of) {
    lane_y[tid] = y;
    y += row_h * rows + lane_gap;
  }
  const double height = y + 60;
  const double range = std::max(t1 - t0, 1e-3);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    svg::num(left + width + 20) + "\" height=\"" + svg::num(height) + "\">\n";
  out += svg::rect(0, 0, left + width + 20, height, "#ffffff");
  out += svg::text(10, 22,
                   title + " (" + std::to_string(spans.size()) + " tasks, " +
                       svg::num(range / 1000.0) +
                       " ms; nested rows: tasks run by a helping wait "
                       "inside the task above)",
                   "start", 15);
  int lane = 0;
  for (const auto& [tid, rows] : rows_of) {
    const double ly = lane_y[tid];
    out += svg::rect(left, ly, width, row_h * rows, lane++ % 2 ? "#f4f4f4" : "#fafafa");
    const std::string name = names.count(tid) ? names[tid] : "track " + std::to_string(tid);
    out += svg::text(left - 8, ly + row_h * rows / 2 + 4, name, "end", 12);
  }
  for (const span& s : spans) {
    const double x = left + (s.ts - t0) / range * width;
    const double w = s.dur / range * width;
    out += svg::rect(x, lane_y[s.tid] + row_h * s.depth + 1, w, row_h - 2,
                     s.stolen ? "#ee6677" : "#4477aa");
  }
  const double axis_y = y;
  for (int t = 0; t <= 10; ++t) {
    const double x = left + width * t / 10.0;
    out += svg::line(x, axis_y, x, axis_y + 5, "#333");
    out += svg::text(x, axis_y + 18, svg::num(range * t / 10.0 / 1000.0) + " ms", "middle", 10);
  }
  out += svg::rect(left, axis_y + 28, 12, 12, "#4477aa") +
         svg::text(left + 16, axis_y + 38, "task run where it was spawned (or injected)");
  out += svg::rect(left + 330, axis_y + 28, 12, 12, "#ee6677") +
         svg::text(left + 346, axis_y + 38, "stolen task");
  return out + "</svg>\n";
}

}  // namespace bench
