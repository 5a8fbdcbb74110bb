// heist-bench output: progress lines, the terminal table, report.md with SVG charts, a CSV
// of every sample, and trace timelines rendered as SVG (no external tools needed).
#pragma once

#include <string>
#include <vector>

#include "config.hpp"
#include "results.hpp"

namespace bench {

void print_header(const machine_info& m, const config& cfg);
// --verbose: each row printed as it is measured (otherwise only the final table).
void set_verbose(bool on);
void print_progress(const result& r);
// For each row at n > 1 threads with a 1-thread row of the same backend and workload, timed
// in the same rounds (timed_case_with): notes the scaling T1/Tn taken round by round (sample k
// of both rows comes from round k), median and p10..p90. A ratio of medians taken minutes
// apart would mostly measure how the machine's load changed in between.
void note_paired_scaling(std::vector<result>& rows);
void print_table(const std::vector<result>& results);
void write_report(const config& cfg, const machine_info& m, const std::vector<result>& results);
// The SVG charts, written to cfg.out; returns their file names (charts.cpp).
std::vector<std::string> write_charts(const config& cfg, const std::vector<result>& results);

// Renders a Chrome Trace Event JSON (as written by heist::executor::write_trace) as an SVG
// timeline: one lane per track, one box per task, stolen tasks in a second colour.
std::string render_trace_svg(const std::string& trace_json, const std::string& title);

}  // namespace bench
