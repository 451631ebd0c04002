#!/usr/bin/env bash
# libtile_rt is the runtime alone: no LLVM symbol anywhere in it, nothing
# exported but tile_*, no dependency on LLVM or the C++ runtime, and small
# (its code, not counting debug information, under 1 MiB; libtile's is ~20 MB);
# every export under the version node TILE_<major> (src/package/exports.map).
set -euo pipefail
lib=$1
fail=0
llvm=$(nm "$lib" | grep -ci llvm || true)
if [ "$llvm" != 0 ]; then echo "FAIL: $llvm LLVM symbols in $lib"; fail=1; fi
# the version node itself is an absolute symbol (type A) named TILE_<major>
exported=$(nm -D --defined-only "$lib" | awk '!($2 == "A" && $3 ~ /^TILE_[0-9]+$/) {print $3}' | grep -cv '^tile_' || true)
if [ "$exported" != 0 ]; then echo "FAIL: symbols other than tile_* exported:"; nm -D --defined-only "$lib" | grep -v ' tile_'; fail=1; fi
unversioned=$(nm -D --defined-only --with-symbol-versions "$lib" | grep ' tile_' | grep -cv '@@TILE_[0-9]*$' || true)
if [ "$unversioned" != 0 ]; then echo "FAIL: $unversioned tile_* exports without the version node TILE_<major>"; fail=1; fi
needed=$(readelf -d "$lib" | grep NEEDED | grep -ciE 'llvm|stdc\+\+' || true)
if [ "$needed" != 0 ]; then echo "FAIL: $lib needs LLVM or libstdc++"; readelf -d "$lib" | grep NEEDED; fail=1; fi
code=$(size -B "$lib" | awk 'NR == 2 {print $1 + $2}')
if [ "$code" -ge 1048576 ]; then echo "FAIL: $lib has $code bytes of code and data"; fail=1; fi
count=$(nm -D --defined-only "$lib" | grep -c ' tile_')
[ $fail = 0 ] && echo "$lib: $count tile_* exports, $code bytes of code and data, no LLVM"
exit $fail
