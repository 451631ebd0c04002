#!/usr/bin/env bash
# Writes the PTX (and the GPU-layout IR) of the three examples, the matmul's
# autotune configs under every refill/TMA setting, and the wide-row bench kernels
# into OUTDIR, one file each, so that two builds can be compared byte for byte:
#   tests/ptx_snapshot.sh build-before /tmp/a; tests/ptx_snapshot.sh build /tmp/b; diff -r /tmp/a /tmp/b
# A change meant to keep behaviour (a restructuring) must leave the diff empty.
set -euo pipefail
build=$1 out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
tilec=$build/tilec
mkdir -p "$out"
emit() { # NAME ARGS...
  local name=$1; shift
  "$tilec" "$@" --emit=ptx -o "$out/$name.ptx"
  "$tilec" "$@" --emit=tgir -o "$out/$name.tgir"
}
for arch in sm_80 sm_90a; do
  emit "vector_add.$arch" "$root/examples/vector_add/vector_add.tl" --arch $arch \
    --signature '*fp32:16,*fp32:16,*fp32:16,i32' -D BLOCK_SIZE=1024
  emit "softmax.$arch" "$root/examples/softmax/softmax.tl" --arch $arch \
    --signature '*fp32:16,*fp32:16,i32,i32,i32' -D BLOCK_SIZE=1024 --num-warps 8
  for config in 0 1 2 3 4 5 6 7; do
    for act in '""' '"leaky_relu"'; do
      for refill in early late auto; do
        for tma in auto off; do
          [ $arch = sm_80 ] && [ $tma = off ] && continue
          emit "matmul.$arch.c$config.${act//\"/}.$refill.$tma" "$root/examples/matmul/matmul.tl" --arch $arch \
            --signature '*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1' \
            --config $config -D ACTIVATION=$act --refill=$refill --tma=$tma
        done
      done
    done
  done
  for kernel in softmax_bwd:fp32 layer_norm_fwd:fp16 row_max_argmax:fp32 softmax_online:fp32; do
    name=${kernel%%:*}
    case $name in
      layer_norm_fwd) sig='*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32,i32,fp32' ;;
      row_max_argmax) sig='*fp32:16,*fp32:16,*i32:16,i32,i32' ;;
      *) sig='*fp32:16,*fp32:16,*fp32:16,i32,i32' ;;
    esac
    [ $name = softmax_online ] && sig='*fp32:16,*fp32:16,i32,i32'
    emit "$name.$arch" "$root/bench/kernels/wide_rows.tl" --kernel $name --arch $arch \
      --signature "$sig" -D BLOCK=4096 --num-warps 8
  done
done
echo "$(ls "$out" | wc -l) files in $out"
