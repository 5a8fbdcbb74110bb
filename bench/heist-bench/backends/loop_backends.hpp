// Loop backends for workloads/loops.hpp: one class per runtime, the schedule chosen at
// construction. run(fn) calls fn(policy) where the runtime's threads are ready (inside a
// heist task, a oneTBB arena, or on the OpenMP master thread).
#pragma once

#include <heist/heist.hpp>

#include <cstddef>
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <string>

#include "heist_backend.hpp"

namespace bench {

class heist_loops {
 public:
  enum class kind { automatic, simple, fixed, affinity };
  heist_loops(int threads, kind k, std::size_t grain = 1) : m_kind(k), m_grain(grain) {
    m_exec = &shared_executor(threads, heist::steal_policy::sticky_random);
  }
  std::string name() const {
    switch (m_kind) {
      case kind::automatic:
        return "heist auto";
      case kind::simple:
        return "heist simple,g=" + std::to_string(m_grain);
      case kind::fixed:
        return "heist static";
      case kind::affinity:
        return "heist affinity";
    }
    return "heist ?";
  }
  template <class Fn>
  void run(Fn&& fn) {
    std::latch done(1);
    m_exec->post([&] {
      fn(*this);
      done.count_down();
    });
    done.wait();
  }
  // One affinity_partitioner per loop site, reused across repetitions (that is the point).
  template <class Body>
  void for_range(std::size_t n, Body&& body) {
    const heist::blocked_range<std::size_t> r(0, n, m_grain);
    auto b = [&](const heist::blocked_range<std::size_t>& s) { body(s.begin(), s.end()); };
    switch (m_kind) {
      case kind::automatic:
        heist::parallel_for(r, b);
        break;
      case kind::simple:
        heist::parallel_for(r, b, heist::simple_partitioner{});
        break;
      case kind::fixed:
        heist::parallel_for(r, b, heist::static_partitioner{});
        break;
      case kind::affinity:
        heist::parallel_for(r, b, affinity_for(n));
        break;
    }
  }
  template <class Body>
  double sum(std::size_t n, Body&& body) {
    const heist::blocked_range<std::size_t> r(0, n, m_grain);
    auto b = [&](const heist::blocked_range<std::size_t>& s, double acc) {
      return acc + body(s.begin(), s.end());
    };
    auto join = [](double x, double y) { return x + y; };
    switch (m_kind) {
      case kind::automatic:
        return heist::parallel_reduce(r, 0.0, b, join);
      case kind::simple:
        return heist::parallel_reduce(r, 0.0, b, join, heist::simple_partitioner{});
      case kind::fixed:
        return heist::parallel_reduce(r, 0.0, b, join, heist::static_partitioner{});
      case kind::affinity:
        return heist::parallel_reduce(r, 0.0, b, join, affinity_for(n));
    }
    return 0;
  }

 private:
  heist::affinity_partitioner& affinity_for(std::size_t n) {
    auto& p = m_affinity[n];
    if (!p) p = std::make_unique<heist::affinity_partitioner>();
    return *p;
  }
  kind m_kind;
  std::size_t m_grain;
  heist::executor* m_exec;
  std::map<std::size_t, std::unique_ptr<heist::affinity_partitioner>> m_affinity;
};

class serial_loops {
 public:
  explicit serial_loops(int) {}
  std::string name() const { return "serial"; }
  template <class Fn>
  void run(Fn&& fn) {
    fn(*this);
  }
  template <class Body>
  void for_range(std::size_t n, Body&& body) {
    body(0, n);
  }
  template <class Body>
  double sum(std::size_t n, Body&& body) {
    return body(0, n);
  }
};

}  // namespace bench
