#!/usr/bin/env bash
# Model-checks tests/model/chase_lev.pml with spin, exhaustively: the model of heist's deque
# must hold every assertion, and the variant without the pop's seq_cst fence (T4) must fail
# one (the last-element double take), which shows the check can find that bug. The same for
# the fence-free pop mode (-DFENCE_FREE): it must hold, and each of its four mutants (the
# thief's barrier, the owner's count check, the place of the owner's mode read, the thief's
# wait for the owner's acknowledgement) must fail.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
cd "$work"
check() {  # $1: extra spin flags. Sets $summary and $errors.
  rm -f pan* *.trail
  spin $1 -a "$here/chase_lev.pml" >/dev/null
  gcc -O2 -DSAFETY -DNOREDUCE -DCOLLAPSE -DVECTORSZ=4096 -o pan pan.c 2>/dev/null
  ./pan -m100000 > pan.out 2>&1 || true
  summary=$(grep -E "states, stored|errors:" pan.out | sed -E 's/^ +//' | tr '\n' ';')
  errors=$(grep -Eo "errors: [0-9]+" pan.out | grep -Eo "[0-9]+")
}
expect_pass() {  # $1: label, $2: spin flags
  check "$2"
  echo "  $1: $summary"
  if [ "$errors" != "0" ]; then
    echo "FAIL: the model ($1) violates an assertion (trail in $work)" >&2
    exit 1
  fi
}
expect_caught() {  # $1: label, $2: spin flags of a variant with a known bug
  check "$2"
  echo "  $1: $summary"
  if [ "$errors" = "0" ]; then
    echo "FAIL: the model should catch the bug of variant $1" >&2
    exit 1
  fi
}
echo "heist model check: Chase-Lev deque on TSO, 3 values, grow 2 -> 4, 2 thieves"
expect_pass "heist's orders" ""
expect_caught "without T4 fence" "-DNO_T4_FENCE"
echo "heist model check: fence-free pops (3 values, 2 thieves, the owner may switch before each pop)"
expect_pass "heist's protocol" "-DFENCE_FREE"
expect_caught "thief without barrier" "-DFENCE_FREE -DNO_BARRIER"
expect_caught "owner ignores the count" "-DFENCE_FREE -DNO_COUNT"
expect_caught "mode read before T3" "-DFENCE_FREE -DMODE_BEFORE_T3"
expect_caught "go-ahead before the acknowledgement" "-DFENCE_FREE -DACK_ON_SWITCHING"
echo "OK: no violation with heist's orders; every variant with a known bug is caught"
