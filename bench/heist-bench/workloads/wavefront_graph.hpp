// The wavefront grid (flow.hpp) as a heist task_graph: a node per block, after its left and
// upper neighbours. Shared by the graphs family and heist-bench --analyze.
#pragma once

#include <heist/task_graph.hpp>

#include <cstddef>
#include <vector>

#include "flow.hpp"

namespace bench {

inline void build_wavefront(heist::task_graph& g, wavefront_grid& w) {
  std::vector<heist::graph_node> nodes;
  nodes.reserve(w.rows * w.cols);
  for (std::size_t i = 0; i < w.rows; ++i) {
    for (std::size_t j = 0; j < w.cols; ++j) {
      nodes.push_back(g.emplace([&w, i, j] { w.block(i, j); }));
      if (i > 0) nodes[(i - 1) * w.cols + j].precede(nodes.back());
      if (j > 0) nodes[i * w.cols + j - 1].precede(nodes.back());
    }
  }
}

}  // namespace bench
