// The run's result at a glance: per family, heist's time as a fraction of oneTBB's and of the
// best other backend's (geometric means over the family's rows), and heist's own scaling.
#pragma once

#include <string>
#include <vector>

#include "results.hpp"

namespace bench {

struct family_summary {
  std::string family;
  double vs_tbb = 0;  // geometric mean of heist/oneTBB over the rows both have; NaN: none
  int tbb_rows = 0;
  double vs_best = 0;  // the same against the fastest other backend of each row
  int best_rows = 0;
  double scaling = 0;  // geometric mean of heist's T1/Tp at the run's most threads; NaN: none
  int scaling_rows = 0;
};

// Families in the order they ran. `most_threads`: the run's largest thread count (Tp's p).
std::vector<family_summary> summarize_families(const std::vector<result>& rs, int most_threads);

// The summary as text lines (terminal) and as a Markdown table (report.md).
std::vector<std::string> summary_lines(const std::vector<family_summary>& s, int most_threads);
std::string summary_markdown(const std::vector<family_summary>& s, int most_threads);

}  // namespace bench
