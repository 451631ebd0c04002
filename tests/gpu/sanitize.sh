#!/bin/sh
# Runs a program under compute-sanitizer and passes when the tool reports no
# errors and the program succeeds.  Skips (77, with the reason) without a GPU
# or without compute-sanitizer.
#   sanitize.sh TOOL GPU_PROBE PROGRAM ARGS...     (TOOL: memcheck, racecheck, ...)
tool=$1 probe=$2
shift 2
"$probe" || exit $?
sanitizer=$(command -v compute-sanitizer 2>/dev/null)
for dir in "${CUDA_HOME:-/usr/local/cuda}/bin" /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer; do
  [ -n "$sanitizer" ] && break
  [ -x "$dir/compute-sanitizer" ] && sanitizer=$dir/compute-sanitizer
done
if [ -z "$sanitizer" ]; then
  echo "SKIP: compute-sanitizer not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)"
  exit 77
fi
log=$(mktemp)
"$sanitizer" --tool "$tool" --error-exitcode 99 "$@" >"$log" 2>&1
status=$?
cat "$log"
# memcheck ends with "ERROR SUMMARY: 0 errors"; racecheck with
# "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
if grep -q "ERROR SUMMARY: 0 errors" "$log" || grep -q "SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" "$log"; then
  clean=1
else
  clean=0
fi
rm -f "$log"
if [ "$status" -ne 0 ] || [ "$clean" -ne 1 ]; then
  echo "FAIL: $tool: exit status $status, $( [ $clean -eq 1 ] && echo 'no errors reported' || echo 'errors reported or no summary')"
  exit 1
fi
echo "PASS: $tool: 0 errors"
