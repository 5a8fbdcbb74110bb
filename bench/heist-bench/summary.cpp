// heist-bench's summary (summary.hpp).
#include "summary.hpp"

#include <cmath>
#include <cstdio>

#include "row_math.hpp"

namespace bench {
namespace {

// Backends that are heist (its steal policies and loop schedules): not "other".
bool is_heist(const std::string& backend) {
  return backend.rfind("heist", 0) == 0;
}
bool is_tbb(const std::string& backend) {
  return backend == "oneTBB" || backend == "oneTBB auto";
}

struct geo_mean {
  double log_sum = 0;
  int n = 0;
  void add(double v) {
    if (std::isnan(v) || v <= 0) return;
    log_sum += std::log(v);
    ++n;
  }
  double value() const { return n == 0 ? std::nan("") : std::exp(log_sum / n); }
};

}  // namespace

std::vector<family_summary> summarize_families(const std::vector<result>& rs, int most_threads) {
  std::vector<std::string> order;
  for (const result& r : rs) {
    if (std::find(order.begin(), order.end(), r.group) == order.end()) order.push_back(r.group);
  }
  std::vector<family_summary> out;
  for (const std::string& family : order) {
    geo_mean tbb, best, scaling;
    for (const std::string& w : workloads_in_order(rs)) {
      for (const result& r : rs) {
        if (r.group != family || r.workload != w) continue;
        const result* h = heist_row(rs, w, r.threads);
        if (h != &r) continue;  // one entry per heist row
        // oneTBB, and the fastest other backend, at the same workload and thread count.
        const result* fastest = nullptr;
        for (const result& o : rs) {
          if (o.workload != w || o.threads != r.threads || is_heist(o.backend) ||
              o.backend == "serial" || o.stats.median <= 0) {
            continue;
          }
          if (is_tbb(o.backend)) tbb.add(heist_over(rs, o));
          const bool faster =
              fastest == nullptr || (o.lower_is_better ? o.stats.median < fastest->stats.median
                                                       : o.stats.median > fastest->stats.median);
          if (faster) fastest = &o;
        }
        if (fastest != nullptr) best.add(heist_over(rs, *fastest));
        if (r.threads == most_threads && most_threads > 1 && r.unit == "ms") {
          const result* one = find_result(rs, w, r.backend, 1);
          if (one != nullptr && r.stats.median > 0) scaling.add(one->stats.median / r.stats.median);
        }
      }
    }
    if (tbb.n == 0 && best.n == 0 && scaling.n == 0) continue;
    out.push_back({family, tbb.value(), tbb.n, best.value(), best.n, scaling.value(), scaling.n});
  }
  return out;
}

std::vector<std::string> summary_lines(const std::vector<family_summary>& s, int most_threads) {
  std::vector<std::string> lines;
  lines.push_back(
      "Summary: heist's time / the other's, same workload and thread count, same run "
      "(below 1: heist is faster; geometric mean over the family's rows)");
  char b[200];
  std::snprintf(b, sizeof b, "  %-22s %-18s %-22s %s", "family", "vs oneTBB",
                "vs best other backend", ("heist T1/T" + std::to_string(most_threads)).c_str());
  lines.push_back(b);
  auto cell = [](double v, int n) {
    return std::isnan(v) ? std::string("-") : fmt(v) + " (" + std::to_string(n) + " rows)";
  };
  for (const family_summary& f : s) {
    std::snprintf(b, sizeof b, "  %-22s %-18s %-22s %s", f.family.c_str(),
                  cell(f.vs_tbb, f.tbb_rows).c_str(), cell(f.vs_best, f.best_rows).c_str(),
                  std::isnan(f.scaling) ? "-" : fmt(f.scaling).c_str());
    lines.push_back(b);
  }
  return lines;
}

std::string summary_markdown(const std::vector<family_summary>& s, int most_threads) {
  std::string md =
      "heist's time as a fraction of the other backend's, same workload and thread count, same "
      "run: **below 1, heist is faster** (for rates, the other's rate over heist's). Each cell "
      "is the geometric mean over the family's rows; T1/T" +
      std::to_string(most_threads) + " is heist's own scaling (time-measured rows).\n\n";
  md += "| family | vs oneTBB | vs best other backend | heist T1/T" + std::to_string(most_threads) +
        " |\n|---|---|---|---|\n";
  auto cell = [](double v, int n) {
    return std::isnan(v) ? std::string("-") : fmt(v) + " (" + std::to_string(n) + " rows)";
  };
  for (const family_summary& f : s) {
    md += "| " + f.family + " | " + cell(f.vs_tbb, f.tbb_rows) + " | " +
          cell(f.vs_best, f.best_rows) + " | " + (std::isnan(f.scaling) ? "-" : fmt(f.scaling)) +
          " |\n";
  }
  return md;
}

}  // namespace bench
