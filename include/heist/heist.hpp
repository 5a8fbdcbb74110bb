// heist: a work-stealing task scheduler. This header brings the whole public API.
#pragma once

#include "heist/detail/config.hpp"  // first: it refuses a language version older than C++20

#include "heist/analysis.hpp"
#include "heist/blocked_range.hpp"
#include "heist/combinable.hpp"
#include "heist/coroutine.hpp"
#include "heist/executor.hpp"
#include "heist/executor_options.hpp"
#include "heist/future.hpp"
#include "heist/parallel_for.hpp"
#include "heist/parallel_for_each.hpp"
#include "heist/parallel_reduce.hpp"
#include "heist/parallel_scan.hpp"
#include "heist/parallel_sort.hpp"
#include "heist/partitioner.hpp"
#include "heist/pipeline.hpp"
#include "heist/promise.hpp"
#include "heist/sizing.hpp"
#include "heist/stats.hpp"
#include "heist/task_arena.hpp"
#include "heist/task_graph.hpp"
#include "heist/task_group.hpp"
#include "heist/version.hpp"
#include "heist/when.hpp"
