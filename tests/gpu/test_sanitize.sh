#!/bin/sh
# sanitize.sh's verdicts, without a GPU: a stand-in compute-sanitizer on PATH
# plays each way a run can end (clean; hazards in the kernels; the program
# killed by SIGSEGV, which the real tool reports as its own exit status 11;
# the tool itself killed by SIGSEGV, once or twice), and each verdict must
# name whose failure it was.
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/compute-sanitizer" <<'FAKE'
#!/bin/sh
# FAKE_MODE: clean | hazards | program_segv | tool_segv | tool_segv_once (then clean)
echo "========= COMPUTE-SANITIZER"
mode=$FAKE_MODE
if [ "$mode" = tool_segv_once ]; then
  if [ -e "$FAKE_DIR/crashed" ]; then mode=clean; else touch "$FAKE_DIR/crashed"; mode=tool_segv; fi
fi
case $mode in
  clean) echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"; exit 0 ;;
  hazards) echo "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"; exit 99 ;;
  program_segv) echo "========= Error: process didn't terminate successfully"
                echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"; exit 11 ;;
  tool_segv) kill -SEGV $$ ;;
esac
FAKE
chmod +x "$dir/compute-sanitizer"
failed=0 passed=0
expect() { # MODE EXIT_STATUS TEXT: sanitize.sh's status and a line of its output
  out=$(FAKE_MODE=$1 FAKE_DIR=$dir PATH="$dir:$PATH" sh "$here/sanitize.sh" racecheck true prog 2>&1)
  status=$?
  rm -f "$dir/crashed"
  if [ "$status" -eq "$2" ] && printf '%s\n' "$out" | grep -qF -- "$3"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    printf 'FAIL %s: status %s (want %s), want a line with "%s" in:\n%s\n' "$1" "$status" "$2" "$3" "$out"
  fi
}
expect clean 0 "PASS: racecheck: 0 errors"
expect hazards 1 "FAIL: racecheck: racecheck reported errors in the kernels"
expect program_segv 1 "FAIL: racecheck: the program failed (exit status 11"
expect tool_segv 1 "FAIL: racecheck: compute-sanitizer itself was killed by signal 11"
expect tool_segv_once 0 "NOTE: racecheck: compute-sanitizer itself was killed by signal 11"
expect tool_segv_once 0 "PASS: racecheck: 0 errors"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
