#!/usr/bin/env bash
# Model-checks tests/model/chase_lev.pml with spin, exhaustively: the model of heist's deque
# must hold every assertion, and the variant without the pop's seq_cst fence (T4) must fail
# one (the last-element double take), which shows the check can find that bug.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
cd "$work"
check() {  # $1: extra spin flags. Sets $summary and $errors.
  rm -f pan* *.trail
  spin $1 -a "$here/chase_lev.pml" >/dev/null
  gcc -O2 -DSAFETY -DNOREDUCE -DVECTORSZ=4096 -o pan pan.c 2>/dev/null
  ./pan -m100000 > pan.out 2>&1 || true
  summary=$(grep -E "states, stored|errors:" pan.out | sed -E 's/^ +//' | tr '\n' ';')
  errors=$(grep -Eo "errors: [0-9]+" pan.out | grep -Eo "[0-9]+")
}
echo "heist model check: Chase-Lev deque on TSO, 3 values, grow 2 -> 4, 2 thieves"
check ""
echo "  heist's orders:   $summary"
if [ "$errors" != "0" ]; then
  echo "FAIL: the model of heist's deque violates an assertion (trail in $work)" >&2
  exit 1
fi
check "-DNO_T4_FENCE"
echo "  without T4 fence: $summary"
if [ "$errors" = "0" ]; then
  echo "FAIL: without the T4 fence the model should find the double take" >&2
  exit 1
fi
echo "OK: no violation with heist's orders; the fenceless variant is caught"
