// heist-bench's catalogue of workloads and backends (catalog.hpp).
#include "catalog.hpp"

#include <utility>

namespace bench {
namespace {

const std::pair<const char*, const char*> k_workloads[] = {
    {"fib", "fib(30): a task_group run + wait per call (1.3 million spawns)"},
    {"fib-invoke", "fib(30) through parallel_invoke"},
    {"fib-plain", "fib(30) with the group written in the recursive function itself"},
    {"nqueens", "nqueens(12): a search tree with a task per placed queen"},
    {"skynet", "skynet(1e6): 1.1 million tasks, ten to a group"},
    {"integrate", "adaptive quadrature: a tree shaped by the integrand"},
    {"uts", "unbalanced tree search, geometric tree"},
    {"uts-deep", "unbalanced tree search, binomial tree of 1e7 nodes, 1,668 levels"},
    {"matmul", "recursive matrix multiply"},
    {"quicksort", "recursive quicksort of random integers"},
    {"memory", "peak resident memory of each fork-join workload (a fresh process per bar)"},
    {"epcc1", "EPCC's imbalanced loop 1 (triangular) under every schedule"},
    {"epcc2", "EPCC's imbalanced loop 2 (a heavy band of rows) under every schedule"},
    {"epcc2split", "loop 2 with sleeping rows: how close each schedule gets to the best split"},
    {"vecadd", "vector add: a memory-bound loop"},
    {"smallloops", "2,000 back-to-back loops of 2,048 tiny iterations: the cost of a loop call"},
    {"reduce", "parallel sum with parallel_reduce"},
    {"sort-int", "parallel_sort of 1e7 random ints"},
    {"sort-string", "parallel_sort of 1e6 random decimal strings"},
    {"scan", "parallel_scan (inclusive prefix sum) of 1e8 ints"},
    {"feeder-tree",
     "parallel_for_each with a feeder over a tree found as it is walked (1e6 nodes)"},
    {"histogram", "a byte histogram in per-thread bins (combinable)"},
    {"uneven", "tasks of heavy-tailed cost dealt out at once: does stealing even the load"},
    {"hotspot", "one thread spawns every task: does the work spread"},
    {"idle-stealing", "work arriving while other workers idle"},
    {"mixed", "compute beside tasks that block, with and without heist::blocking"},
    {"arena-cost", "an empty task_arena::execute and isolate, per call"},
    {"wavefront", "a 16x16 wavefront task graph of 20 us blocks"},
    {"wavefront0", "the wavefront graph with empty nodes: the per-node cost"},
    {"chain", "a chain of empty graph nodes: the cost of one dependence"},
    {"tree", "a binary tree of empty graph nodes"},
    {"rerun", "one small graph run many times"},
    {"pipeline", "a three-stage pipeline of small items"},
    {"pipeline-1us", "the pipeline with 1 us of work per item and stage"},
    {"pipeline-heavy", "the pipeline with a heavy parallel middle stage"},
    {"then-chain", "a chain of 100,000 then() continuations: time per link"},
    {"when-all", "when_all over 100,000 futures"},
    {"coro-fib", "fib written as coroutines (co_await group.join()) against task_group fib"},
    {"ping-pong", "a promise set outside the pool resuming a coroutine: latency"},
    {"coro-memory", "memory per suspended coroutine"},
    {"priority", "how soon a high-priority task starts on an idle and on a flooded pool"},
    {"idle-threads", "how soon work starts after idle workers ended their threads"},
    {"idle", "CPU time an idle pool uses in 2 s"},
    {"wakeup", "latency from a submit to a sleeping pool until the task runs"},
    {"submit", "tasks per second posted from threads outside the pool"},
    {"trickle", "a task every 200 us of 20 us: CPU use and latency of a lightly loaded pool"},
    {"mpi", "Jacobi and distributed UTS over MPI (figures of scripts/bench's MPI runs)"},
};

const std::pair<const char*, const char*> k_families[] = {
    {"fork-join",
     "heist (sticky random victims), heist-random, heist-rr (round robin), heist-none (no "
     "stealing), tbb (oneTBB task_group), omp (OpenMP tasks), serial, lockpool (a lock-based "
     "pool)"},
    {"memory", "heist, tbb, omp"},
    {"algorithms",
     "heist, tbb (oneTBB's algorithms), std-par (std::execution::par: sort, scan), "
     "serial"},
    {"loops",
     "heist-auto, heist-simple, heist-static, heist-affinity, tbb-auto, tbb-simple, omp-static, "
     "omp-dynamic1, omp-dynamic4, omp-dynamic16, omp-guided, serial"},
    {"uneven loads",
     "heist, heist-none, rr-dealing (tasks dealt round robin, no stealing), central (one "
     "shared queue), lockpool, tbb"},
    {"arenas", "heist, heist-noblock (no heist::blocking), tbb"},
    {"graphs and pipelines", "heist (task_graph, parallel_pipeline), tbb (flow graph, pipeline)"},
    {"async", "heist; coro-fib also tbb"},
    {"sizing", "heist"},
    {"service", "heist, tbb, lockpool, central, rr-dealing"},
    {"mpi", "heist"},
};

}  // namespace

const char* what_it_measures(const std::string& key) {
  for (const auto& [k, what] : k_workloads) {
    if (key == k) return what;
  }
  return "";
}

const char* backends_of_family(const std::string& family) {
  for (const auto& [f, backends] : k_families) {
    if (family == f) return backends;
  }
  return "";
}

}  // namespace bench
