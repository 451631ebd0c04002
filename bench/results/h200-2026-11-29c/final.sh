#!/usr/bin/env bash
# the nineteenth session's final GPU run: GPU tests, the new sim cases, attention figures
cd "$(dirname "$0")/.."
B=gpu-bundle/build
export LD_LIBRARY_PATH=$PWD/$B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
start=$(date +%s)
OUT=$OUT timeout 420 bash tests/gpu/run.sh tests 'runtime|seeds|cuda|large_offsets|bundle|multi_gpu|example|memcheck|assume|inline|racecheck.softmax|racecheck.tensor_cores' > $OUT/gpu_tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - start )) s"; tail -24 $OUT/gpu_tests.txt
( $B/tests/sim/sim_diff --gpu contract libdevice_convert; $B/tests/sim/sim_diff --seed 1108034648 --gpu contract libdevice_convert ) > $OUT/sim_gpu.txt 2>&1; echo "sim rc=$?"; cat $OUT/sim_gpu.txt
export TRITON_TUTORIAL_06=$PWD/.probe/06-fused-attention.py
timeout 150 python3 bench/attention.py --tilec $PWD/$B/tilec --shapes 64:4096:0,64:16384:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1 --csv $OUT/attention.csv > $OUT/attention.txt 2>&1
echo "attention rc=$? $(( $(date +%s) - start )) s"; cut -d, -f1-11 $OUT/attention.csv
