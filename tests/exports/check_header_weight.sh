#!/bin/sh
# Test (ctest headers.task_group_stays_light): what including <heist/task_group.hpp> costs
# a user's build. The header keeps the inline fast path and nothing else: none of <mutex>,
# <condition_variable>, <thread> or <future> reaches a user through it, and neither does the
# executor's implementation (src/core/executor_impl.hpp, which no installed header includes),
# and it includes at most 15 other heist headers. Usage: check_header_weight.sh CXX SOURCE_DIR
set -eu
cxx=$1
src=$2
tree=$(mktemp)
trap 'rm -f "$tree"' EXIT
echo '#include <heist/task_group.hpp>' |
  "$cxx" -std=c++20 -I"$src/include" -H -fsyntax-only -x c++ - 2>"$tree"
heavy=$(grep -E '^\.+ ' "$tree" | grep -E '/(mutex|condition_variable|thread|future)$|executor_impl\.hpp$' || true)
if [ -n "$heavy" ]; then
  echo "task_group.hpp pulls in:"
  echo "$heavy"
  exit 1
fi
count=$(grep -E '^\.+ ' "$tree" | grep -F 'include/heist/' | grep -v '/heist/task_group\.hpp$' |
  awk '{print $2}' | sort -u | wc -l)
if [ "$count" -lt 5 ]; then
  echo "found only $count heist headers: the scan is broken"
  exit 1
fi
if [ "$count" -gt 15 ]; then
  echo "task_group.hpp includes $count heist headers (at most 15):"
  grep -E '^\.+ ' "$tree" | grep -F 'include/heist/' | grep -v '/heist/task_group\.hpp$'
  exit 1
fi
echo "task_group.hpp: $count heist headers; no <mutex>, <condition_variable>, <thread>, <future>"
