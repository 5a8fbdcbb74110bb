// text_file: the two helpers that sizing.cpp (cgroup files, HEIST_NUM_THREADS) and
// topology.cpp (sysfs) share: read a small kernel file whole, and parse a plain decimal.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace heist::detail {

// The whole file at `path` into `out`; false if it cannot be opened or read.
inline bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

// `s` as a non-negative decimal of at most `max_digits` digits (no sign, no spaces), else
// nullopt. max_digits <= 18 keeps the value inside 64 bits.
inline std::optional<std::uint64_t> parse_decimal(const std::string& s, std::size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  std::uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(ch - '0');
  }
  return v;
}

}  // namespace heist::detail
