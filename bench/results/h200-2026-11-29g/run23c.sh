#!/usr/bin/env bash
# 23rd session: one-wave register variant (JIT and bench/tile_cubin.py), spill retry, helper returns: GPU tests,
# tutorial kernels vs Triton with and without the one-wave variant, tutorials against the interpreter
cd "$(dirname "$0")/.."
B=gpu-bundle/build
export LD_LIBRARY_PATH=$PWD/$B
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p /tmp/o
OUT=/tmp/o timeout 150 bash tests/gpu/run.sh tests 'runtime|seeds|cuda|large|example' > /tmp/t.txt 2>&1; echo "tests rc=$?"; sed -n '/=== summary/,$p' /tmp/t.txt | tail -20
grep -i -B2 -A8 'FAIL' /tmp/o/logs/gpu.runtime.log | head -30
export TILE_CACHE_DIR=$(mktemp -d)
for ow in 1 0; do
  TILE_CUBIN_ONE_WAVE=$ow timeout 100 python3 bench/tutorial_others.py --tilec $B/tilec --tutorials .probe/tut --only _layer_norm_bwd_dwdb --csv $OUT/others_ow$ow.csv > /tmp/others$ow.txt 2>&1; echo "others one_wave=$ow rc=$?"; grep -v Warn /tmp/others$ow.txt | tail -6
done
TILE_CUBIN_ONE_WAVE=1 timeout 100 python3 bench/tutorial_others.py --tilec $B/tilec --tutorials .probe/tut --csv $OUT/others_all.csv > /tmp/othersall.txt 2>&1; echo "others all rc=$?"; grep -v -i 'warn\|tabulate\|^ *\^\|^import' /tmp/othersall.txt | tail -22
start=$(date +%s); timeout 200 python3 tests/gpu/tutorials.py --tilec $B/tilec --tutorials .probe/tut > $OUT/tutorials.txt 2>&1; echo "tutorials rc=$? in $(( $(date +%s) - start )) s"; tail -1 $OUT/tutorials.txt; grep -E 'FAIL' $OUT/tutorials.txt | cut -c1-300
