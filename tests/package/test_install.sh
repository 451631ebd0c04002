#!/usr/bin/env bash
# tile installed to a fresh prefix and used from outside, as a C developer would (README "Install"):
# cmake --install, then a project of its own (consumer/) built with find_package(tile) and run on the
# interpreter; the same program built with nothing but `pkg-config --cflags --libs tile`, and one
# with tile_rt; the installed tilec run; a find_package asking for another version refused; the
# pkg-config files still right after the prefix is moved; a bundle from the installed `tilec pack` loaded
# and launched by one C file built with pkg-config (libtile on the interpreter; libtile_rt, which runs
# bundles on the GPU only, saying so on the interpreter); every tile_* import of the programs bound to
# the version node TILE_<major>; examples/ship, the three tutorials shipped through tile_add_kernels.
#   test_install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # WHAT COMMAND...: passes when COMMAND succeeds
  local what=$1
  shift
  if "$@" >"$tmp/out" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $what"
  else
    failed=$((failed + 1))
    echo "FAIL $what:"
    sed 's/^/     /' "$tmp/out"
  fi
}
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(cd "$prefix" && dirname "$(find . -name 'libtile.so.0' | head -n 1)" | sed 's|^\./||')
export TILE_INTERPRET=1 TILE_CACHE_DIR=$tmp/cache
unset LD_LIBRARY_PATH

check "installed: the header, both libraries by SONAME, the CMake package, the pkg-config files" \
  test -f "$prefix/include/tile/tile.h" -a -e "$prefix/$libdir/libtile.so.0" -a -e "$prefix/$libdir/libtile_rt.so.0" \
  -a -f "$prefix/$libdir/cmake/tile/tileConfig.cmake" -a -f "$prefix/$libdir/pkgconfig/tile.pc" \
  -a -f "$prefix/$libdir/pkgconfig/tile_rt.pc"
check "the installed tilec runs from its prefix" sh -c "'$prefix/bin/tilec' --version | grep -q '^tilec '"

configure() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release; }
check "find_package(tile 0.1): consumer/ configures and builds" \
  sh -c "$(declare -f configure); prefix='$prefix'; configure '$here/consumer' '$tmp/b' && cmake --build '$tmp/b'"
check "find_package consumer: vector add on the interpreter, every element right" "$tmp/b/consumer"
check "find_package consumer_rt: libtile_rt links and refuses to compile" "$tmp/b/consumer_rt"
check "tile_add_kernels: the bundle and launcher built with the project, run on the interpreter" "$tmp/b/consumer_launcher"
check "examples/ship (find_package, tile_add_kernels: vector add, softmax, the autotuned matmul) builds" \
  sh -c "$(declare -f configure); prefix='$prefix'; configure '$here/../../examples/ship' '$tmp/ship' && cmake --build '$tmp/ship'"
check "examples/ship runs on the interpreter, every result right" "$tmp/ship/ship"
check "the programs' tile_* imports are bound to TILE_0" \
  sh -c "objdump -T '$tmp/b/consumer' | grep ' tile_' | grep -v -q '(TILE_0)' && exit 1
         objdump -T '$tmp/b/consumer' | grep -q '(TILE_0) *tile_launch_grid$'"

mkdir -p "$tmp/other"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(other C)\nfind_package(tile 1.0 CONFIG REQUIRED)\n' >"$tmp/other/CMakeLists.txt"
check "find_package(tile 1.0) refuses this version, naming it" \
  sh -c "$(declare -f configure); prefix='$prefix'; ! configure '$tmp/other' '$tmp/ob' >'$tmp/other.log' 2>&1 &&
         grep -q 'version: $(sed -n 's/^Version: //p' "$prefix/$libdir/pkgconfig/tile.pc")' '$tmp/other.log'"

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
check "pkg-config tile: one C file built and run on the interpreter" \
  sh -c "cc -std=c11 '$here/consumer/main.c' -o '$tmp/pc' \$(pkg-config --cflags --libs tile) -Wl,-rpath,\$(pkg-config --variable=libdir tile) && '$tmp/pc'"
check "pkg-config tile_rt: one C file built and run" \
  sh -c "cc -std=c11 '$here/consumer/rt.c' -o '$tmp/pc_rt' \$(pkg-config --cflags --libs tile_rt) -Wl,-rpath,\$(pkg-config --variable=libdir tile_rt) && '$tmp/pc_rt'"
check "tilec pack (installed): the vector add bundle" \
  "$prefix/bin/tilec" pack "$here/../../examples/vector_add/vector_add.tl" --signature "*fp32,*fp32,*fp32,i32" \
  --arch sm_80 -D BLOCK_SIZE=1024 -o "$tmp/add.tlk"
check "pkg-config tile: one C file loads the bundle and launches it on the interpreter, every element right" \
  sh -c "cc -std=c11 '$here/consumer/bundle.c' -o '$tmp/bundle' \$(pkg-config --cflags --libs tile) -Wl,-rpath,\$(pkg-config --variable=libdir tile) &&
         '$tmp/bundle' '$tmp/add.tlk' | grep -q '^bundle: .* on the interpreter: 0 of 1000 wrong$'"
check "pkg-config tile_rt: the same file builds, loads the bundle, and on the interpreter says it runs bundles on the GPU only" \
  sh -c "cc -std=c11 '$here/consumer/bundle.c' -o '$tmp/bundle_rt' \$(pkg-config --cflags --libs tile_rt) -Wl,-rpath,\$(pkg-config --variable=libdir tile_rt) &&
         ! '$tmp/bundle_rt' '$tmp/add.tlk' 2>'$tmp/bundle_rt.err' && grep -q '^bundle: launch: .*(libtile_rt runs bundles on the GPU only)' '$tmp/bundle_rt.err'"
mv "$prefix" "$tmp/moved"
export PKG_CONFIG_PATH=$tmp/moved/$libdir/pkgconfig
check "pkg-config after the prefix moved: the new place" \
  sh -c "test \"\$(realpath \"\$(pkg-config --variable=includedir tile)\")\" = '$tmp/moved/include'"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
