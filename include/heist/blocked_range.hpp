// blocked_range<T>: a half-open range [begin, end) of integers or
// random-access iterators that parallel loops split in halves while size() > grainsize.
#pragma once

#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <type_traits>

namespace heist {

// Tag of the splitting constructor (the oneTBB range concept): `R right(left, split{})`
// moves the upper half of `left` into `right`.
struct split {};

template <class T>
class blocked_range {
  static_assert(std::is_integral_v<T> || std::random_access_iterator<T>,
                "blocked_range<T>: T must be an integral type or a random-access iterator");

 public:
  using value_type = T;
  using const_iterator = T;

  // [begin, end), split while size() > grainsize. grainsize 0: std::invalid_argument. An
  // end before begin is an empty range.
  blocked_range(T begin, T end, std::size_t grainsize = 1)
      : m_begin(begin), m_end(end), m_grainsize(grainsize) {
    if (grainsize == 0) {
      throw std::invalid_argument("heist::blocked_range: grainsize must be at least 1, got 0");
    }
    if (!(m_begin < m_end)) m_end = m_begin;
  }

  // Splitting constructor: takes the upper half of r; r keeps the lower half.
  blocked_range(blocked_range& r, split)
      : m_begin(r.midpoint()), m_end(r.m_end), m_grainsize(r.m_grainsize) {
    r.m_end = m_begin;
  }

  T begin() const noexcept { return m_begin; }
  T end() const noexcept { return m_end; }
  std::size_t size() const noexcept {
    if constexpr (std::is_integral_v<T>) {
      // Unsigned arithmetic: no overflow even for ranges wider than T's positive half.
      using U = std::make_unsigned_t<T>;
      return static_cast<std::size_t>(
          static_cast<U>(static_cast<U>(m_end) - static_cast<U>(m_begin)));
    } else {
      return static_cast<std::size_t>(m_end - m_begin);
    }
  }
  bool empty() const noexcept { return !(m_begin < m_end); }
  std::size_t grainsize() const noexcept { return m_grainsize; }
  bool is_divisible() const noexcept { return size() > m_grainsize; }

 private:
  T midpoint() const noexcept {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(m_begin) + static_cast<U>(size() / 2)));
    } else {
      return m_begin + static_cast<std::iter_difference_t<T>>(size() / 2);
    }
  }

  T m_begin;
  T m_end;
  std::size_t m_grainsize;
};

}  // namespace heist
