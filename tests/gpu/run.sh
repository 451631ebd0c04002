#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, what tests/gpu/bundle.sh
# packed into gpu-bundle/: the GPU tests (the same commands as `ctest -L gpu`,
# without ctest: the runtime's GPU tests, every example at full size on the
# GPU, compute-sanitizer runs, offsets past 2^31), then the benchmarks (tile,
# Triton and torch, merged by bench/report.py).  Prints a summary table last.
# Logs, CSV and PNG go to $OUT when it is set, else to gpu-bundle/out.  The benchmark parts also sample
# the SM clock and power (nvidia-smi) into clocks.csv, and each benchmark's note gives their medians.
#   bash tests/gpu/run.sh [all|tests|bench|matmul|configs] [NAME_FILTER]
#     tests: the GPU tests only; bench: the vector add, softmax, compile and
#     launch benchmarks (BENCH_ROUNDS=N: vector add and softmax N times, each
#     figure their median); matmul: the fp16 matmul benchmarks (tile, Triton,
#     cuBLAS; each program stops starting shapes after its --time-limit, so
#     this part fits a 10-minute command); configs: tile and Triton config by
#     config in one harness at the squares 1024..8192 (bench/matmul_configs.py,
#     CONFIG_ROUNDS=N medians, default 3); NAME_FILTER: a grep pattern over
#     test names (e.g. 'example|large').  `bench` and `matmul` each fit in a
#     10-minute command; `all` is all three parts and does not.
# Exit status: 0 when nothing failed (skips are listed, not failures).
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
filter=${2:-.}
bundle=gpu-bundle
out=${OUT:-$bundle/out}
mkdir -p "$out/logs"
if [ ! -f "$bundle/gpu_tests.sh" ]; then
  echo "run.sh: no $bundle/gpu_tests.sh: run tests/gpu/bundle.sh where tile was built and carry $bundle" >&2
  exit 2
fi
export LD_LIBRARY_PATH=$PWD/$bundle/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# a fresh kernel cache: everything measured or tested is compiled by this build
TILE_CACHE_DIR=$(mktemp -d /tmp/tile-cache-XXXXXX)
export TILE_CACHE_DIR

names=() results=() seconds=() notes=()
record() { names+=("$1"); results+=("$2"); seconds+=("$3"); notes+=("$4"); }

# For the benchmark parts: the SM clock and power, sampled about every 0.1 s into $out/clocks.csv
# (epoch seconds, MHz, W), and each benchmark's medians over its own time in its summary note, so that
# figures from different harnesses can be told apart from a GPU held at its power limit.
sample_clocks() {
  while :; do
    printf '%s,%s\n' "$(date +%s.%N)" "$(nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits \
      2>/dev/null | head -n 1)"
    sleep 0.1
  done
}
if [ "$what" != tests ] && command -v nvidia-smi >/dev/null 2>&1; then
  sample_clocks >"$out/clocks.csv" &
  sampler=$!
  trap 'kill "$sampler" 2>/dev/null' EXIT
fi

# The median of column $3 of $out/clocks.csv between epoch seconds $1 and $2.
clock_median() {
  awk -F', *' -v s="$1" -v e="$2" -v c="$3" '$1 >= s && $1 <= e && $c ~ /^[0-9]/ {print $c}' "$out/clocks.csv" |
    sort -n | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'
}

clock_note() {
  [ -s "$out/clocks.csv" ] || return 0
  local sm watts
  sm=$(clock_median "$1" "$2" 2)
  watts=$(clock_median "$1" "$2" 3)
  [ -n "$sm" ] && echo "SM ${sm} MHz, ${watts} W (medians)"
}

# Runs one command with a time limit, its output in $out/logs/NAME.log;
# exit status `skip` is a skip.  gpu_test NAME SKIP TIMEOUT -- COMMAND...
gpu_test() {
  local name=$1 skip=$2 limit=$3
  shift 4
  echo "$name" | grep -Eq -- "$filter" || return 0
  local log=$out/logs/$name.log start status result note elapsed
  echo "== $name: $*"
  start=$(date +%s%N)
  timeout "$limit" "$@" >"$log" 2>&1
  status=$?
  local end
  end=$(date +%s%N)
  elapsed=$(((end - start) / 100000000))
  elapsed=$((elapsed / 10)).$((elapsed % 10))
  note=""
  if [ "$status" -eq 0 ]; then
    result=PASS
  elif [ "$status" -eq "$skip" ]; then
    result=SKIP
    note=$(grep -m1 -o 'SKIP: .*' "$log" | cut -c1-100)
  elif [ "$status" -eq 124 ]; then
    result=FAIL
    note="timed out after ${limit} s"
  else
    result=FAIL
    note="exit status $status"
  fi
  local clocks=""
  case $name in bench.*) clocks=$(clock_note "${start%?????????}.${start: -9}" "${end%?????????}.${end: -9}") ;; esac
  [ -n "$clocks" ] && note="${note:+$note; }$clocks"
  [ "$result" = FAIL ] && tail -n 25 "$log" | sed "s/^/   | /"
  echo "   $result ($elapsed s) $note"
  record "$name" "$result" "$elapsed" "$note"
}

run_tests() {
  echo "=== GPU tests ($bundle/gpu_tests.sh)"
  "$bundle/build/tests/gpu/gpu_probe" | tee "$out/logs/gpu_probe.log"
  # shellcheck source=/dev/null
  . "$bundle/gpu_tests.sh"
}

# Merges every benchmark CSV written so far (this run's and an earlier part's, every round, and
# matmul_configs.py's: its best-of-each rows, timed in turns) into $out/results; a figure measured in
# several rounds is reported as their median.
run_report() {
  local csvs=()
  for f in "$out"/tile*.csv "$out"/triton*.csv "$out"/matmul_configs.csv; do
    [ -s "$f" ] && csvs+=("$f")
  done
  if [ ${#csvs[@]} -gt 0 ]; then
    gpu_test bench.report -1 120 -- python3 bench/report.py --out "$out/results" "${csvs[@]}"
    [ -f "$out/results/summary.md" ] && cat "$out/results/summary.md"
  fi
}

# BENCH_ROUNDS=N (default 1): vector add and softmax measured N times, tile's and Triton's harnesses
# alternating (compile and launch times once); the report gives each figure's median.
run_bench() {
  echo "=== benchmarks: vector add, softmax, compile time, launch time"
  local parts=vector_add,softmax,compile,launch round suffix=""
  for ((round = 1; round <= ${BENCH_ROUNDS:-1}; round++)); do
    gpu_test bench.tile$suffix -1 280 -- "$bundle/build/bench/bench" --only $parts --csv "$out/tile$suffix.csv" .
    gpu_test bench.triton$suffix -1 280 -- python3 bench/triton_bench.py --only $parts \
      --csv "$out/triton$suffix.csv" --tilec "$bundle/build/tilec"
    parts=vector_add,softmax suffix=.$((round + 1))
  done
  run_report
}

# tile's autotuner and Triton's both tune every shape (8 configs each), then each shape is timed.
run_matmul() {
  echo "=== benchmarks: fp16 matmul"
  gpu_test bench.tile_matmul -1 300 -- "$bundle/build/bench/bench" --only matmul --time-limit 260 \
    --csv "$out/tile_matmul.csv" .
  gpu_test bench.triton_matmul -1 260 -- python3 bench/triton_bench.py --only matmul --time-limit 220 \
    --csv "$out/triton_matmul.csv"
  run_report
}

# Each of the tutorial's configs on both sides in Triton's harness, and each side's best (one harness's autotuning).
run_configs() {
  echo "=== benchmarks: fp16 matmul config by config"
  gpu_test bench.matmul_configs -1 560 -- python3 bench/matmul_configs.py "$bundle/build/tilec" \
    1024x1024x1024 2048x2048x2048 3072x3072x3072 4096x4096x4096 6144x6144x6144 8192x8192x8192 \
    --rounds "${CONFIG_ROUNDS:-3}" --refill --tma --csv "$out/matmul_configs.csv"
  cat "$out/logs/bench.matmul_configs.log"
  run_report
}

case $what in
all) run_tests; run_bench; run_matmul ;;
tests) run_tests ;;
bench) run_bench ;;
matmul) run_matmul ;;
configs) run_configs ;;
*) echo "usage: bash tests/gpu/run.sh [all|tests|bench|matmul|configs] [NAME_FILTER]" >&2; exit 2 ;;
esac
rm -rf "$TILE_CACHE_DIR"

echo
echo "=== summary (logs in $out/logs)"
printf '%-28s %-6s %8s  %s\n' test result seconds note | tee "$out/summary.txt"
for i in "${!names[@]}"; do
  printf '%-28s %-6s %8s  %s\n' "${names[$i]}" "${results[$i]}" "${seconds[$i]}" "${notes[$i]}"
done | tee -a "$out/summary.txt"
failed=$(grep -c ' FAIL ' "$out/summary.txt" || true)
echo "$failed failed"
[ "$failed" -eq 0 ]
