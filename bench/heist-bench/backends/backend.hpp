// The interface every heist-bench backend implements (checked by the `backend` concept).
// Workloads are templates over a backend, so each runtime runs its own idiomatic code
// (task_group::run/wait, omp task/taskwait, ...) with no virtual call per spawn.
//
//   B(int threads)                  a pool of `threads` threads in all, counting the thread
//                                   that runs the root if the runtime uses it (oneTBB's
//                                   arena.execute, OpenMP's parallel region)
//   b.name()                        label used in reports
//   b.run(root)                     runs root() on the pool; returns when it has returned
//   B::fork2(a, b)                  inside a task: a() as a task, b() inline, then join
//   B::fork_each(n, f)              inside a task: f(i) for i < n as tasks, then join
//   b.post(f)                       from outside the pool: fire and forget (optional; the
//                                   service workloads need it, see `service_backend`)
#pragma once

#include <concepts>
#include <cstddef>
#include <string>

namespace bench {

struct noop {
  void operator()() const noexcept {}
  void operator()(std::size_t) const noexcept {}
};

template <class B>
concept backend = requires(B b, noop f) {
  { b.name() } -> std::convertible_to<std::string>;
  b.run(f);
  B::fork2(f, f);
  B::fork_each(std::size_t{1}, f);
};

template <class B>
concept service_backend = backend<B> && requires(B b, noop f) {
  b.post(f);
};

}  // namespace bench
