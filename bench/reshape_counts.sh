#!/usr/bin/env bash
# Counts bar.sync, st.shared and ld.shared in the PTX of bench/kernels/reshape.tl (a 16x32 tl.sort,
# tl.flip, and tutorial 09's reshape-permute-split epilogue on a 128x256 mma accumulator) for sm_80
# and sm_90a: the numbers docs/tgir.md quotes.  Usage: bench/reshape_counts.sh BUILD
set -euo pipefail
tilec=$1/tilec
src=$(cd "$(dirname "$0")" && pwd)/kernels/reshape.tl
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() { # NAME ARGS...
  local name=$1; shift
  "$tilec" "$src" "$@" --emit=ptx -o "$out/$name.ptx"
  printf '%-14s bar.sync %3d  st.shared %3d  ld.shared %3d\n' "$name" "$(grep -c bar.sync "$out/$name.ptx" || true)" \
    "$(grep -c st.shared "$out/$name.ptx" || true)" "$(grep -c ld.shared "$out/$name.ptx" || true)"
}
for arch in sm_80 sm_90a; do
  count "sort.$arch" --kernel sort16x32 --arch $arch --signature '*fp32:16,*fp32:16'
  count "flip.$arch" --kernel flip16x32 --arch $arch --signature '*fp32:16,*fp32:16'
  count "epilogue.$arch" --kernel epilogue --arch $arch --signature '*fp16:16,*fp16:16,*fp16:16' \
    -D BM=128 -D BN=256 -D BK=64
done
