#!/bin/sh
# Test (ctest HeistBench.ForkJoinPathIsInlineInTheWorkloads): no out-of-line copy of the
# fork-join path's pieces is left in heist-bench, whose workload functions are as large as a
# user's. GCC 12 kept task_group's constructor out of line in heist-bench's nqueens fork (a
# call and four stack pushes and pops per node, 3.5-4% of nqueens(12)), and clang 14 kept
# task_group::run out of line in every workload (a call per spawn: skynet 25% slower) until
# both were marked always-inline; this catches the next piece that
# falls out of the inlined path. (task_group(executor&) is compiled in the library on purpose:
# a fork-join function constructs its groups with task_group().) Usage: check_fork_join_inline.sh NM HEIST_BENCH
set -eu
nm_tool=$1
bench=$2
symbols=$("$nm_tool" -C --defined-only "$bench") || { echo "$nm_tool failed on $bench"; exit 1; }
[ -n "$symbols" ] || { echo "$bench has no symbols to check"; exit 1; }
echo "$symbols" | grep -q ' bench::heist_backend::' ||
  { echo "$bench defines no heist backend code: nothing was checked"; exit 1; }
out_of_line=$(echo "$symbols" | grep -E ' [tTwW] (heist::task_group::task_group\(|heist::task_group::wait\(\)|void heist::task_group::run<|heist::task_group::~task_group\(|(void|heist::detail::task\*) heist::detail::(spawn_from|spawn|build_task|build_task_ungrouped)<|heist::detail::(wait_for_group|queue_on_own_slot|run_popped_own_child|try_run_own_child)(<[^>]*>)?\()' |
  grep -vF 'heist::task_group::task_group(heist::executor&)' || true)
if [ -n "$out_of_line" ]; then
  echo "out-of-line copies of the fork-join path:"
  echo "$out_of_line"
  exit 1
fi
echo "fork-join path inline"
