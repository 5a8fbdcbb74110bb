// heist-bench output: progress lines, the terminal table, report.md with SVG charts, a CSV
// of every sample, and trace timelines rendered as SVG (no external tools needed).
#pragma once

#include <string>
#include <vector>

#include "config.hpp"
#include "results.hpp"

namespace bench {

void print_header(const machine_info& m, const config& cfg);
void print_progress(const result& r);
void print_table(const std::vector<result>& results);
void write_report(const config& cfg, const machine_info& m, const std::vector<result>& results);

// Renders a Chrome Trace Event JSON (as written by heist::executor::write_trace) as an SVG
// timeline: one lane per track, one box per task, stolen tasks in a second colour.
std::string render_trace_svg(const std::string& trace_json, const std::string& title);

}  // namespace bench
