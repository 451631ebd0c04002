#!/usr/bin/env bash
# tilec pack --launcher: the generated header and C file compiled into a program of one's own
# (launcher_main.c) with a plain C compiler and libtile, run on the interpreter; and --grid's errors.
#   test_launcher.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
pack() { "$build/tilec" pack "$src/examples/vector_add/vector_add.tl" --signature "*fp32:16,*fp32:16,*fp32:16,i32" \
  --signature "*fp32,*fp32,*fp32,i32" --arch sm_80 -D BLOCK_SIZE=1024 -o "$tmp/add.tlk" --launcher "$tmp/add_kernel" "$@"; }
pack --grid "(triton.cdiv(n_elements, meta['BLOCK_SIZE']),)" || exit 1
cc -std=c11 -Wall -Wextra -Werror -I"$src/include" -I"$tmp" "$src/tests/package/launcher_main.c" "$tmp/add_kernel.c" \
  -L"$build" -ltile -Wl,-rpath,"$build" -o "$tmp/main" || exit 1
out=$(TILE_INTERPRET=1 TILE_CACHE_DIR="$tmp/cache" "$tmp/main")
status=$?
echo "$out"
[ $status -eq 0 ] || fail=1
echo "$out" | grep -q "argument 1 ('y_ptr')\|argument 0 ('x_ptr')" || { echo "FAIL: no argument error through the launcher"; fail=1; }
expect_error() { # WANT GRID
  local got
  got=$(pack --grid "$2" 2>&1) && { echo "FAIL: --grid '$2' was accepted"; fail=1; return; }
  echo "$got" | grep -qF -- "$1" || { echo "FAIL: --grid '$2': want '$1', got: $got"; fail=1; }
}
expect_error "'n' is neither an integer parameter of the kernel nor one of its constexprs" "cdiv(n, BLOCK_SIZE)"
expect_error "'x_ptr' is neither an integer parameter" "x_ptr"
expect_error "';' is not part of a grid expression" "cdiv(n_elements; 2)"
expect_error "'BLOCK' is neither an integer parameter" "cdiv(n_elements, meta['BLOCK'])"
[ $fail -eq 0 ] && echo "launcher: ok"
exit $fail
