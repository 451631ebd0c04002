#!/bin/sh
# Runs a program under compute-sanitizer and passes when the tool reports no
# errors and the program succeeds.  Skips (77, with the reason) without a GPU
# or without compute-sanitizer.  A failure says whose it is: the kernels'
# (hazards or errors reported), the program's (it exited non-zero or died of
# a signal: compute-sanitizer then says "process didn't terminate
# successfully" and exits with the program's status, a signal's number
# included), or the tool's own (compute-sanitizer itself killed by a signal:
# the shell sees 128 + N).  The tool's own crash is run once more, and the
# test passes only if that run is clean; both runs are printed.
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

# Runs the tool once; sets status and verdict ("" when clean).
run_once() {
  log=$(mktemp)
  "$sanitizer" --tool "$tool" --error-exitcode 99 "$@" >"$log" 2>&1
  status=$?
  cat "$log"
  # memcheck ends with "ERROR SUMMARY: 0 errors"; racecheck with
  # "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
  clean=0
  if grep -q "ERROR SUMMARY: 0 errors" "$log" || grep -q "SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" "$log"; then
    clean=1
  fi
  verdict=""
  if [ "$status" -gt 128 ]; then
    verdict="compute-sanitizer itself was killed by signal $((status - 128)) (the tool's crash, not the program's:"
    verdict="$verdict a program that dies makes the tool exit with its status)"
  elif grep -q "process didn't terminate successfully" "$log"; then
    verdict="the program failed (exit status $status; a signal's number when it was killed), not the kernels"
  elif [ "$status" -eq 99 ]; then
    verdict="$tool reported errors in the kernels"
  elif [ "$status" -ne 0 ]; then
    verdict="exit status $status"
  elif [ "$clean" -ne 1 ]; then
    verdict="no summary from $tool"
  fi
  rm -f "$log"
}

run_once "$@"
if [ "$status" -gt 128 ]; then
  echo "NOTE: $tool: $verdict; running it once more"
  run_once "$@"
fi
if [ -n "$verdict" ]; then
  echo "FAIL: $tool: $verdict"
  exit 1
fi
echo "PASS: $tool: 0 errors"
