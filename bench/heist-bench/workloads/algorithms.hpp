// The parallel algorithms' workloads: their inputs, and the serial reference of each. A
// backend (backends/algorithm_backends.hpp) runs each the way its library's users write it.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fork_join.hpp"  // splitmix

namespace bench {

// 1e7 random ints, 1e6 random decimal strings (1 to 19 digits, short-string sized).
inline std::vector<int> random_ints(std::size_t n, std::uint64_t seed = 11) {
  std::mt19937_64 rng(seed);
  std::vector<int> v(n);
  for (int& x : v)
    x = static_cast<int>(rng());
  return v;
}
inline std::vector<std::string> random_strings(std::size_t n, std::uint64_t seed = 12) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> v(n);
  for (std::string& s : v)
    s = std::to_string(rng() >> (rng() % 60));
  return v;
}

// A cheap fingerprint of a sorted sequence: 1,024 evenly spaced elements hashed with their
// positions (the whole sequence is checked by the tests; this catches a backend that sorts
// wrongly without adding an O(n) pass to every timed run).
template <class V, class Hash>
std::uint64_t sample_fingerprint(const V& v, Hash hash) {
  std::uint64_t h = v.size();
  if (v.empty()) return h;
  for (std::size_t k = 0; k < 1024; ++k) {
    const std::size_t i = k * (v.size() - 1) / 1023;
    h = splitmix(h ^ (hash(v[i]) + i));
  }
  return h;
}
inline std::uint64_t hash_int(int x) {
  return static_cast<std::uint32_t>(x);
}
inline std::uint64_t hash_string(const std::string& s) {
  return std::hash<std::string>{}(s);
}

// The scan's input: 1e8 small unsigned values; outputs are 64-bit running sums.
inline std::vector<std::uint32_t> scan_input(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::uint32_t>(splitmix(i) & 15);
  return v;
}
// The scan's answer: the total, and outputs sampled as for the sort.
inline std::uint64_t scan_fingerprint(std::uint64_t total, const std::vector<std::uint64_t>& out) {
  return splitmix(total) ^ sample_fingerprint(out, [](std::uint64_t x) { return x; });
}

// An unbalanced tree discovered as it is walked (UTS-like, geometric child counts from a hash
// of the node id): 1,055,058 nodes with these parameters. A for_each-with-feeder workload: the
// root is the one initial item, every node feeds its children.
struct tree_node {
  std::uint64_t id;
  int depth;
};
struct tree_shape {
  double mean_children = 2.8;
  int max_depth = 12;
  std::uint64_t root = 42;
};
inline int tree_children(const tree_node& n, const tree_shape& s) {
  if (n.depth >= s.max_depth) return 0;
  std::uint64_t h = n.id;
  for (int i = 0; i < 8; ++i)
    h = splitmix(h);
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
  const double q = s.mean_children / (1.0 + s.mean_children);
  return std::min(64, static_cast<int>(std::floor(std::log1p(-u) / std::log(q))));
}
inline tree_node tree_child(const tree_node& n, int i) {
  return {splitmix(n.id * 64 + static_cast<std::uint64_t>(i) + 1), n.depth + 1};
}
// One node of the walk: its children go to `feed` (a heist or oneTBB feeder).
template <class Feeder>
void feed_children(const tree_node& n, const tree_shape& s, Feeder& feed) {
  const int k = tree_children(n, s);
  for (int i = 0; i < k; ++i)
    feed.add(tree_child(n, i));
}

inline std::uint64_t tree_nodes_serial(const tree_shape& s) {
  std::vector<tree_node> stack{{s.root, 0}};
  std::uint64_t count = 0;
  while (!stack.empty()) {
    const tree_node n = stack.back();
    stack.pop_back();
    ++count;
    const int k = tree_children(n, s);
    for (int i = 0; i < k; ++i)
      stack.push_back(tree_child(n, i));
  }
  return count;
}

// The histogram's input: 5e7 bytes; the answer: sum of bin * count.
inline std::vector<std::uint8_t> histogram_input(std::size_t n) {
  std::mt19937_64 rng(13);
  std::vector<std::uint8_t> v(n);
  for (std::uint8_t& b : v)
    b = static_cast<std::uint8_t>(rng() % 251);
  return v;
}
using bins = std::array<std::uint64_t, 256>;
// The per-thread bins of a combinable (heist's or oneTBB's), added up.
template <class Combinable>
bins sum_bins(Combinable& local) {  // oneTBB's combine_each is not const
  bins total{};
  local.combine_each([&](const bins& b) {
    for (std::size_t i = 0; i < b.size(); ++i)
      total[i] += b[i];
  });
  return total;
}

inline std::uint64_t histogram_fingerprint(const bins& b) {
  std::uint64_t h = 0;
  for (std::size_t i = 0; i < b.size(); ++i)
    h += b[i] * (i + 1);
  return h;
}

}  // namespace bench
