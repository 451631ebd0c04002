#!/usr/bin/env bash
# 23rd session: the spill retry on mma v2 code (sm_90 on an H200): example attention, old (148c4db) vs new;
# tutorial kernels at sm_90a with the new build (regression check)
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/gpu-bundle/build
nvidia-smi --query-gpu=name --format=csv,noheader
export TILE_CACHE_DIR=$(mktemp -d)
for w in old new; do
  timeout 150 python3 bench/attention.py --tilec .probe/tilec-sm90-$w --shapes 128:4096:1,128:4096:0 --reps 3 --csv $OUT/att_sm90_$w.csv > /tmp/att_$w.txt 2>&1; echo "attention sm_90 $w rc=$?"; tail -8 /tmp/att_$w.txt
done
timeout 100 python3 bench/tutorial_others.py --tilec gpu-bundle/build/tilec --tutorials .probe/tut --csv $OUT/others.csv > /tmp/others.txt 2>&1; echo "others rc=$?"; tail -25 /tmp/others.txt
