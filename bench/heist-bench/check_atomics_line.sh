#!/bin/sh
# Test (ctest HeistBench.ReportSaysWhatAtomicsCost): heist-bench's report carries the atomics
# line, and its three figures are above zero (a timing loop the compiler had folded away
# would read 0.0). Usage: check_atomics_line.sh HEIST_BENCH OUT_DIR
set -eu
bench=$1
out=$2
rm -rf "$out"
"$bench" --workloads fib --backends heist --threads 1 --reps 1 --out "$out" >/dev/null
line=$(grep '^- atomics: ' "$out/report.md") || { echo "report.md has no atomics line"; exit 1; }
echo "$line"
echo "$line" | awk '
  match($0, /locked add [0-9.]+ ns, store \+ seq_cst fence \+ load [0-9.]+ ns, plain store [0-9.]+ ns/) {
    split(substr($0, RSTART, RLENGTH), w, " ")
    # w: locked add A ns, store + seq_cst fence + load B ns, plain store C ns
    if (w[3] + 0 > 0 && w[11] + 0 > 0 && w[15] + 0 > 0) exit 0
    print "a figure is zero"; exit 1
  }
  { print "the atomics line does not have its three figures"; exit 1 }'
