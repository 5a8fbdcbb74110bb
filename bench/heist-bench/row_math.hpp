// What the table, the summary and the charts compute from a run's rows: heist's reference row,
// the one ratio every output uses (heist's time over the other's), speedups, and formatting.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "results.hpp"

namespace bench {

// heist's row for the same workload and thread count: its default backend ("heist", or
// "heist auto" for loops). nullptr if the run has none.
inline const result* heist_row(const std::vector<result>& rs, const std::string& workload,
                               int threads) {
  if (const result* r = find_result(rs, workload, "heist", threads)) return r;
  return find_result(rs, workload, "heist auto", threads);
}

// The ratio every output uses: heist's time over `other`'s, for the same workload and thread
// count in the same run (for a rate, `other`'s rate over heist's). Below 1: heist is faster.
// NaN without a heist row.
inline double heist_over(const std::vector<result>& rs, const result& other) {
  const result* h = heist_row(rs, other.workload, other.threads);
  if (h == nullptr || h->stats.median <= 0 || other.stats.median <= 0) return std::nan("");
  return other.lower_is_better ? h->stats.median / other.stats.median
                               : other.stats.median / h->stats.median;
}

// serial time / this time, for timed workloads that have a serial row.
inline double speedup_over_serial(const std::vector<result>& rs, const result& r) {
  const result* s = find_result(rs, r.workload, "serial", 1);
  if (s == nullptr || r.unit != "ms" || r.stats.median <= 0) return std::nan("");
  return s->stats.median / r.stats.median;
}

inline std::vector<std::string> workloads_in_order(const std::vector<result>& rs) {
  std::vector<std::string> order;
  for (const result& r : rs) {
    if (std::find(order.begin(), order.end(), r.workload) == order.end())
      order.push_back(r.workload);
  }
  return order;
}

inline std::string fmt(double v, int prec = 2) {
  if (std::isnan(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

}  // namespace bench
