#!/bin/sh
# tl.inline_asm_elementwise on the GPU, which alone can run its PTX (tests/lit/run_inline_asm.tl checks
# the PTX and the interpreter's error): random u32 inputs of an irregular size, the output checked
# against tests/lit/Inputs/asm_ref.py; then pack > 1 and several results (run_inline_asm_pack.tl, 3000
# elements: whole runs of 4) against Inputs/asm_pack_ref.py.  Skips (77) without a GPU.
#   inline_asm.sh GPU_PROBE TILEC SOURCE_DIR
probe=$1 tilec=$2 src=$3
"$probe" || exit $?
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
inputs=$src/tests/lit/Inputs
python3 "$inputs/npy.py" make "$dir/x.npy" u4 3001 1 &&
  python3 "$inputs/npy.py" make "$dir/y.npy" u4 3001 2 &&
  "$tilec" run "$src/tests/lit/run_inline_asm.tl" --device gpu --grid 12 -D BLOCK=256 -- \
    "$dir/x.npy" "$dir/y.npy" "out:$dir/o.npy:i32:6002" 3001 || exit 1
result=$(python3 "$inputs/asm_ref.py" "$dir/x.npy" "$dir/y.npy" "$dir/o.npy" 3001)
echo "$result"
[ "$result" = "ok 3001" ] || exit 1
python3 "$inputs/npy.py" make "$dir/w.npy" u4 3000 3 &&
  "$tilec" run "$src/tests/lit/run_inline_asm_pack.tl" --device gpu --grid 12 -D BLOCK=256 -- \
    "$dir/w.npy" "out:$dir/p.npy:i32:12000" 3000 || exit 1
result=$(python3 "$inputs/asm_pack_ref.py" "$dir/w.npy" "$dir/p.npy" 3000)
echo "$result"
[ "$result" = "ok 3000" ]
