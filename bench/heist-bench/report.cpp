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
#include "row_math.hpp"
#include "summary.hpp"
#include "svg.hpp"

namespace bench {
namespace {

bool g_verbose = false;

// Wider columns for wider names: the table's columns line up whatever the run contains.
struct table_widths {
  int workload = 8, backend = 7;
};
table_widths widths_of(const std::vector<result>& rs) {
  table_widths w;
  for (const result& r : rs) {
    w.workload = std::max(w.workload, static_cast<int>(r.workload.size()));
    w.backend = std::max(w.backend, static_cast<int>(r.backend.size()));
  }
  return w;
}

// The most threads at which heist's scaling can be read: a heist row timed in ms that has a
// one-thread row of the same workload (rows that simulate more threads than the run's, such
// as the sleeping-row loop, have none).
int most_threads_of(const std::vector<result>& rs) {
  int most = 1;
  for (const result& r : rs) {
    if (r.unit != "ms" || heist_row(rs, r.workload, r.threads) != &r) continue;
    if (find_result(rs, r.workload, r.backend, 1) != nullptr) most = std::max(most, r.threads);
  }
  return most;
}

}  // namespace

void set_verbose(bool on) {
  g_verbose = on;
}

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
  if (!g_verbose) return;  // the table comes once, at the end; --verbose shows rows as they come
  std::printf("  %s | %s | %d thr | median %s %s | p10..p90 %s..%s | n=%zu | %s\n",
              r.workload.c_str(), r.backend.c_str(), r.threads, fmt(r.stats.median, 3).c_str(),
              r.unit.c_str(), fmt(r.stats.p10, 3).c_str(), fmt(r.stats.p90, 3).c_str(), r.stats.n,
              r.note.c_str());
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
  const table_widths w = widths_of(rs);
  std::printf("\n%-*s %3s  %-*s %12s %-8s %22s %10s %8s  %s\n", w.workload, "workload", "thr",
              w.backend, "backend", "median", "unit", "p10 .. p90", "heist/this", "speedup",
              "note");
  std::printf("%s\n",
              std::string(static_cast<std::size_t>(w.workload + w.backend + 76), '-').c_str());
  for (const std::string& name : workloads_in_order(rs)) {
    for (const result& r : rs) {
      if (r.workload != name) continue;
      std::printf("%-*s %3d  %-*s %12s %-8s %10s .. %-9s %10s %8s  %s\n", w.workload,
                  r.workload.c_str(), r.threads, w.backend, r.backend.c_str(),
                  fmt(r.stats.median, 3).c_str(), r.unit.c_str(), fmt(r.stats.p10, 3).c_str(),
                  fmt(r.stats.p90, 3).c_str(), fmt(heist_over(rs, r)).c_str(),
                  fmt(speedup_over_serial(rs, r)).c_str(), r.note.c_str());
    }
  }
  std::printf(
      "\nheist/this: heist's median over this row's, same workload and thread count, same run "
      "(for rates, this rate over heist's): below 1, heist is faster.\nspeedup: the serial "
      "median over this one.\n\n");
  const int most = most_threads_of(rs);
  for (const std::string& line : summary_lines(summarize_families(rs, most), most))
    std::printf("%s\n", line.c_str());
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

  const std::vector<std::string> charts = write_charts(cfg, rs);

  // --- report.md ------------------------------------------------------------------------------
  std::ofstream md(cfg.out + "/report.md");
  const int most = most_threads_of(rs);
  md << "# heist-bench report\n\n## Summary\n\n"
     << summary_markdown(summarize_families(rs, most), most) << "\n";
  md << "## The run\n\n";
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
  md << "\n\nEach row is the median of its samples (a warm-up run is discarded; in the "
        "fork-join, loop, arena and uneven-load rows every timed run comes right after an "
        "untimed one of the same row, so that it starts with the backend's threads awake); "
        "p10/p90 give the spread. `heist/this` is heist's median over the row's, at the same "
        "thread count in the same run (for rates, the row's over heist's): below 1, heist is "
        "faster. T1/Tn in the notes is the row's own scaling, taken round by round."
     << (cfg.verbose ? " With --verbose, a heist row at 2 or more threads that keeps its workers "
                       "busy also says how many samples took over 1.1x its median and what its "
                       "workers did in them: one idle (parked, or its thread preempted by the "
                       "host), cores at different speeds, or every core slower."
                     : "")
     << " Raw samples: `results.csv`.\n";
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
       << ") | p10 | p90 | heist/this | speedup | note |\n|---|---|---|---|---|---|---|---|\n";
    for (const result& r : rs) {
      if (r.workload != w) continue;
      md << "| " << r.threads << " | " << r.backend << " | " << fmt(r.stats.median, 3) << " | "
         << fmt(r.stats.p10, 3) << " | " << fmt(r.stats.p90, 3) << " | " << fmt(heist_over(rs, r))
         << " | " << fmt(speedup_over_serial(rs, r)) << " | " << r.note << " |\n";
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
