// Graph shapes and pipelines for heist-bench: each built once for heist (task_graph,
// parallel_pipeline) and for oneTBB (flow::graph of continue_nodes, parallel_pipeline), run
// many times, and checked against the serial answer.
//   wavefront  a rows x cols grid of blocks, each after its left and upper neighbour
//              (Taskflow's wavefront benchmark); a block spins `work_ns` and computes
//              v[i][j] = v[i-1][j] + v[i][j-1] + 1, so any missed edge changes the checksum
//   chain      n empty nodes in a line (per-node cost without parallelism)
//   tree       a binary tree of 2^depth - 1 nodes, each after its parent (per-node cost with
//              as much parallelism as a fork-join tree)
//   layers     `layers` x `width` nodes, each after two nodes of the layer above; rerun
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../measure.hpp"

namespace bench {

struct wavefront_grid {
  std::size_t rows, cols;
  std::int64_t work_ns;
  std::vector<std::uint64_t> v;
  wavefront_grid(std::size_t r, std::size_t c, std::int64_t ns)
      : rows(r), cols(c), work_ns(ns), v(r * c, 0) {}
  void block(std::size_t i, std::size_t j) {
    if (work_ns > 0) spin_for_ns(work_ns);
    const std::uint64_t up = i > 0 ? v[(i - 1) * cols + j] : 0;
    const std::uint64_t left = j > 0 ? v[i * cols + j - 1] : 0;
    v[i * cols + j] = up + left + 1;
  }
  std::uint64_t checksum() const { return v.back(); }
  void reset() { std::fill(v.begin(), v.end(), 0); }
  std::uint64_t serial() {
    reset();
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j)
        block(i, j);
    const std::uint64_t s = checksum();
    reset();
    return s;
  }
};

struct layered_dag {
  std::size_t layers, width;
  std::vector<std::uint64_t> v;
  layered_dag(std::size_t l, std::size_t w) : layers(l), width(w), v(l * w, 0) {}
  // The second predecessor of node (l, i) in layer l - 1 (the first is (l - 1, i)).
  std::size_t other(std::size_t i) const { return (i * 7 + 3) % width; }
  void node(std::size_t l, std::size_t i) {
    v[l * width + i] = l == 0 ? i + 1 : v[(l - 1) * width + i] + v[(l - 1) * width + other(i)] + 1;
  }
  std::uint64_t checksum() const {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < width; ++i)
      s += v[(layers - 1) * width + i];
    return s;
  }
  std::uint64_t serial() {
    for (std::size_t l = 0; l < layers; ++l)
      for (std::size_t i = 0; i < width; ++i)
        node(l, i);
    return checksum();
  }
};

}  // namespace bench
