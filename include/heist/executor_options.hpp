// Configuration of an executor and the error types it reports.
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

#include "heist/detail/config.hpp"

namespace heist {

// Thrown by submit/post/run from outside an executor once its shutdown began.
class HEIST_API executor_closed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How an idle worker picks the deque it tries to steal from.
enum class steal_policy {
  sticky_random,  // the last victim it stole from first, then random victims (default)
  random,         // a uniformly random victim each attempt
  round_robin,    // starts at the next worker index and walks around
  none,           // never steals; idle workers still take external submissions
};

struct HEIST_API executor_options {
  std::size_t num_workers = 0;  // 0: available_parallelism() (heist/sizing.hpp)
  steal_policy policy = steal_policy::sticky_random;
  std::string name = "heist";  // worker thread names: "heist-0", "heist-1", ...
  bool trace = false;          // record task spans (write_trace)
  // Receives exceptions thrown by post() tasks. Default: print what() to stderr.
  std::function<void(std::exception_ptr)> on_unhandled_exception;
  // Run on each worker thread itself, once, when it starts and when it stops.
  std::function<void(std::size_t worker)> on_worker_start, on_worker_stop;
  // Most threads that blocking() may add at once to stand in for blocked workers. 0 disables
  // stand-ins.
  std::size_t max_blocking_threads = 256;
  // 0: never. Else a worker idle (parked) this long ends its thread; work
  // arriving later starts a thread for it again. num_workers() does not change. Negative:
  // std::invalid_argument naming idle_timeout.
  std::chrono::milliseconds idle_timeout{0};
};

}  // namespace heist
