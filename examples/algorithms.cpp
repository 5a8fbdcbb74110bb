// The parallel algorithms: sort, for_each with a feeder, scan, combinable and a stepped loop.
// Built and run by the tests (ctest example.algorithms); the guide pages quote it.
#include <heist/heist.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

// A directory tree to walk: entry i's children are listed in children[i].
struct tree {
  std::vector<std::vector<int>> children;
  std::vector<std::uint64_t> size;
};

tree make_tree(int entries) {
  tree t;
  t.children.resize(static_cast<std::size_t>(entries));
  t.size.resize(static_cast<std::size_t>(entries));
  std::mt19937 rng(7);
  for (int i = 1; i < entries; ++i) {
    t.children[rng() % static_cast<unsigned>(i)].push_back(i);  // a random earlier parent
    t.size[static_cast<std::size_t>(i)] = rng() % 4096;
  }
  return t;
}

}  // namespace

int main() {
  int failures = 0;

  // [sort]
  std::vector<std::string> words;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200'000; ++i)
    words.push_back(std::to_string(rng() % 1'000'000));
  heist::parallel_sort(words.begin(), words.end());  // std::less, like std::sort
  heist::parallel_sort(words, std::greater<>{});     // a whole container, descending
  // [sort]
  failures += !std::is_sorted(words.begin(), words.end(), std::greater<>{});

  // [feeder]
  const tree t = make_tree(100'000);
  heist::combinable<std::uint64_t> bytes;  // a per-thread partial sum
  const std::vector<int> roots{0};
  heist::parallel_for_each(roots.begin(), roots.end(), [&](int entry, heist::feeder<int>& feed) {
    bytes.local() += t.size[static_cast<std::size_t>(entry)];
    for (int child : t.children[static_cast<std::size_t>(entry)])
      feed.add(child);  // runs in this same call, possibly on another thread
  });
  const std::uint64_t total = bytes.combine(std::plus<>{});
  // [feeder]
  std::uint64_t expected = 0;
  for (std::uint64_t s : t.size)
    expected += s;
  failures += total != expected;

  // [scan]
  std::vector<int> in(1'000'000), out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<int>(i % 10);
  using range = heist::blocked_range<std::size_t>;
  const long sum = heist::parallel_scan(
      range(0, in.size(), 10'000), 0L,
      [&](const range& r, long running, bool is_final) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
          running += in[i];
          if (is_final) out[i] = static_cast<int>(running);  // outputs only in the final pass
        }
        return running;
      },
      [](long left, long right) { return left + right; });
  // [scan]
  long running = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    running += in[i];
    if (out[i] != static_cast<int>(running)) {
      ++failures;
      break;
    }
  }
  failures += sum != running;

  // [histogram]
  std::vector<std::uint8_t> pixels(4'000'000);
  for (auto& p : pixels)
    p = static_cast<std::uint8_t>(rng());
  heist::combinable<std::vector<std::uint64_t>> bins(
      [] { return std::vector<std::uint64_t>(256); });
  heist::parallel_for(range(0, pixels.size()), [&](const range& r) {
    std::vector<std::uint64_t>& mine = bins.local();  // this thread's bins, no lock
    for (std::size_t i = r.begin(); i != r.end(); ++i)
      ++mine[pixels[i]];
  });
  std::vector<std::uint64_t> histogram(256);
  bins.combine_each([&](const std::vector<std::uint64_t>& b) {
    for (std::size_t v = 0; v < 256; ++v)
      histogram[v] += b[v];
  });
  // [histogram]
  std::uint64_t counted = 0;
  for (std::uint64_t c : histogram)
    counted += c;
  failures += counted != pixels.size();

  // [step]
  std::vector<int> grid(1000, 0);
  heist::parallel_for(0, 1000, 3,
                      [&](int i) { grid[static_cast<std::size_t>(i)] = 1; });  // 0, 3, 6, ...
  // [step]
  failures += std::count(grid.begin(), grid.end(), 1) != 334;

  std::printf(
      "sorted %zu words, walked %zu entries (%llu bytes), scanned %zu values, "
      "%llu pixels binned: %s\n",
      words.size(), t.size.size(), static_cast<unsigned long long>(total), in.size(),
      static_cast<unsigned long long>(counted), failures == 0 ? "ok" : "WRONG");
  return failures == 0 ? 0 : 1;
}
