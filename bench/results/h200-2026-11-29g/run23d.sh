#!/usr/bin/env bash
# 23rd session: the example attention's causal programs longest first (forward, dQ), against the previous
# kernel order, one call; the example's GPU test
cd "$(dirname "$0")/.."
B=gpu-bundle/build
export LD_LIBRARY_PATH=$PWD/$B
nvidia-smi --query-gpu=name --format=csv,noheader
export TILE_CACHE_DIR=$(mktemp -d)
S=64:4096:1,128:4096:1,64:16384:1,128:16384:1
for round in 1 2; do
  TILE_ATTENTION_SOURCE=$PWD/.probe/attention_old.tl timeout 120 python3 bench/attention.py --tilec $B/tilec --shapes $S --reps 3 --csv $OUT/att_old_$round.csv > /tmp/a.txt 2>&1; echo "old rc=$?"; grep -E '^[0-9]' /tmp/a.txt | cut -d, -f1-7,10
  timeout 120 python3 bench/attention.py --tilec $B/tilec --shapes $S --reps 3 --csv $OUT/att_new_$round.csv > /tmp/b.txt 2>&1; echo "new rc=$?"; grep -E '^[0-9]' /tmp/b.txt | cut -d, -f1-7,10
done
mkdir -p /tmp/o; OUT=/tmp/o timeout 90 bash tests/gpu/run.sh tests 'gpu.example.attention' > /tmp/t.txt 2>&1; echo "example rc=$?"; tail -3 /tmp/o/logs/gpu.example.attention.log
