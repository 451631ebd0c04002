#!/usr/bin/env bash
# backward block configs after contraction (one kernel varied at a time, the other at the example's default)
cd "$(dirname "$0")/.."
B=gpu-bundle/build
export LD_LIBRARY_PATH=$PWD/$B
export TILE_CACHE_DIR=$(mktemp -d)
ex() { timeout 60 $B/examples/attention --require-gpu -b 4 -H 32 -n 4096 --causal 0 --dtype fp16 --check off --reps 10 --csv "$@" ./examples/attention/attention.tl 2>&1 | grep "^csv" | cut -d, -f3,5,10,11 | tr '\n' ' '; echo " <- $*"; }
for r in 1 2; do ex -d 64; ex -d 128; done
for c in 128x128:8:2 128x128:8:4 64x128:4:3 64x128:8:3 128x64:8:3; do ex -d 64 --dkdv $c; done
for c in 128x64:8:3 128x64:8:2 64x64:4:2 64x64:4:4 128x128:8:2 64x128:4:3; do ex -d 64 --dq $c; done
for c in 64x128:8:3 128x128:8:2 64x64:4:3 32x128:4:3; do ex -d 128 --dkdv $c; done
for c in 128x64:8:3 64x64:4:3 64x64:4:2 128x128:8:2 64x128:4:2; do ex -d 128 --dq $c; done
