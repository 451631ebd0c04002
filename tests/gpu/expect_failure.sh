#!/bin/sh
# Passes when a program fails (non-zero exit) and its output contains a
# pattern: a kernel that must stop on the GPU, with the message that says why.
# Skips (77) without a GPU.
#   expect_failure.sh GPU_PROBE PATTERN PROGRAM ARGS...
probe=$1 pattern=$2
shift 2
"$probe" || exit $?
log=$(mktemp)
"$@" >"$log" 2>&1
status=$?
cat "$log"
found=0
grep -qF -- "$pattern" "$log" && found=1
rm -f "$log"
if [ "$status" -eq 0 ]; then
  echo "FAIL: the program succeeded; it should have failed with: $pattern"
  exit 1
fi
if [ "$found" -ne 1 ]; then
  echo "FAIL: the output lacks: $pattern"
  exit 1
fi
echo "PASS: failed as expected (exit status $status)"
