#!/bin/sh
# Test (ctest HeistBench.BadArgumentsAreRefusedNamingTheArgument): a misspelt workload or
# backend, or a count that is not a whole number of at least 1 (and, for threads, at most
# heist's 4,096), ends heist-bench with exit status 2 and a message naming the option and the
# value, before anything runs (a misspelt workload used to run nothing and print an empty
# table; "--reps abc" said "stoi"; "--threads 5000" ended in std::terminate mid-run). Also:
# --help and --list print to stdout and exit 0.
# Usage: check_bad_arguments.sh HEIST_BENCH OUT_DIR
set -u
bench=$1
out=$2
failed=0
expect() {  # expect MESSAGE ARGUMENTS...
  message=$1
  shift
  rm -rf "$out"
  err=$("$bench" --out "$out" "$@" 2>&1 >/dev/null)
  status=$?
  if [ "$status" -ne 2 ]; then
    echo "heist-bench $*: exit status $status, expected 2"
    failed=1
  elif ! printf '%s\n' "$err" | grep -qF -- "$message"; then
    echo "heist-bench $*: said '$err', expected it to contain '$message'"
    failed=1
  elif [ -e "$out/results.csv" ]; then
    echo "heist-bench $*: wrote results"
    failed=1
  fi
}
expect "--workloads: no workload named 'fibb'" --workloads fib,fibb
expect "--backends: no backend named 'oneTBB'" --workloads fib --backends heist,oneTBB
expect "--reps: 'abc' is not a whole number" --workloads fib --reps abc
expect "--reps: '4x' is not a whole number" --workloads fib --reps 4x
expect "--threads: 0 is below 1" --workloads fib --threads 1,0
expect "--threads: 5000 is above 4096" --workloads fib --threads 2,5000
expect "unknown option --thread" --workloads fib --thread 2
expect "--out needs a value" --workloads fib --out
# --help and --list answer on stdout with exit status 0, running nothing.
help=$("$bench" --help 2>/dev/null)
status=$?
if [ "$status" -ne 0 ]; then
  echo "heist-bench --help: exit status $status, expected 0"
  failed=1
fi
for option in --workloads --backends --threads --reps --full --out --trace --verbose --list; do
  if ! printf '%s\n' "$help" | grep -qF -- "$option"; then
    echo "heist-bench --help does not describe $option"
    failed=1
  fi
done
list=$("$bench" --list 2>/dev/null)
status=$?
if [ "$status" -ne 0 ] || ! printf '%s\n' "$list" | grep -q "nqueens"; then
  echo "heist-bench --list: exit status $status, or no nqueens in it"
  failed=1
fi
exit $failed
