// What heist-bench's workload families share: the run's configuration and results, and
// the families defined outside main.cpp.
#pragma once

#include <vector>

#include "config.hpp"
#include "results.hpp"

namespace bench {

struct context {
  config cfg;
  std::vector<result> results;
};

// Task graphs and pipelines against oneTBB's flow graph and parallel_pipeline
// (flow_workloads.cpp): wavefront, linear chain, binary tree, rerun, pipelines.
void flow_workloads(context& x);

}  // namespace bench
