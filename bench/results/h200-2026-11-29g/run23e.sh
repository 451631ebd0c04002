#!/usr/bin/env bash
# 23rd session, final GPU run at the last commit: the GPU tests but the whole-suite sim diffs, the new sim
# case on the GPU, the tutorials against the interpreter, the tutorial kernels against Triton
cd "$(dirname "$0")/.."
B=gpu-bundle/build
export LD_LIBRARY_PATH=$PWD/$B
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p /tmp/o
OUT=/tmp/o timeout 320 bash tests/gpu/run.sh tests '^gpu\.(runtime|seeds|cuda|large|bundle|multi|example|memcheck|racecheck|assume|inline)' > /tmp/t.txt 2>&1; echo "tests rc=$?"; sed -n '/=== summary/,$p' /tmp/t.txt | tail -30
for f in /tmp/o/logs/*; do echo "$(basename $f): $(tail -1 $f | cut -c1-150)"; done
timeout 60 $B/tests/sim/sim_diff --gpu attention_halves_128 split_scale_join matmul_split_epilogue 2>&1 | tail -4
export TILE_CACHE_DIR=$(mktemp -d)
timeout 150 python3 tests/gpu/tutorials.py --tilec $B/tilec --tutorials .probe/tut > $OUT/tutorials.txt 2>&1; echo "tutorials rc=$?"; tail -1 $OUT/tutorials.txt; grep FAIL $OUT/tutorials.txt | cut -c1-300 | head
timeout 80 python3 bench/tutorial_others.py --tilec $B/tilec --tutorials .probe/tut --csv $OUT/final_others.csv > /tmp/others.txt 2>&1; echo "others rc=$?"; grep -E '^[0-9]' /tmp/others.txt | cut -d, -f1-3,9-11
