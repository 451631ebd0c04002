#!/usr/bin/env bash
# Packs what the GPU machine needs into gpu-bundle/ (ignored by git), keeping
# the build tree's relative paths (gpu-bundle/build/...): libtile, the
# programs of every test labelled `gpu` (stripped), the examples and the
# benchmark, and gpu-bundle/gpu_tests.sh, those tests' commands with paths
# made relative to the repository root, so tests/gpu/run.sh can run them there
# without ctest (the GPU machine has another absolute path and no CMake).
# The device tool carries at most 64 MiB: the bundle is checked against that.
#   bash tests/gpu/bundle.sh [--exclude REGEX] [BUILD_DIR]    (default: build; run after building it)
#     --exclude: leave out the gpu tests whose names match (Python regex), e.g. to stay under 64 MiB
# Then carry gpu-bundle and run `bash tests/gpu/run.sh` from the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
exclude='^$'
if [ "${1:-}" = --exclude ]; then
  exclude=$2
  shift 2
fi
build=$(cd "${1:-build}" && pwd)
bundle=gpu-bundle
limit=$((64 * 1024 * 1024))

[ -f "$build/CTestTestfile.cmake" ] || { echo "bundle.sh: $build is not a build tree: build first" >&2; exit 1; }
[ -x "$build/examples/vector_add" ] ||
  { echo "bundle.sh: $build has no examples: libtile lacks the GPU API (see CMakeLists.txt)" >&2; exit 1; }
rm -rf "$bundle"
mkdir -p "$bundle/build"

# gpu_tests.sh and the list of build files the tests name, from ctest's JSON
ctest --test-dir "$build" -L gpu --show-only=json-v1 >"$bundle/ctest.json"
python3 - "$bundle/ctest.json" "$root" "$build" "$bundle" "$exclude" <<'EOF'
import json, os, re, shlex, sys

tests_json, root, build, bundle, exclude = sys.argv[1:6]
relative_build = os.path.join(bundle, "build")


def portable(arg):
    """An argument with the build and source trees' absolute paths made relative to the repository root."""
    if arg == build or arg.startswith(build + "/"):
        return relative_build + arg[len(build):]
    if arg == root or arg.startswith(root + "/"):
        return "." + arg[len(root):]
    return arg


lines = ["# The GPU tests (ctest -L gpu), written by tests/gpu/bundle.sh for tests/gpu/run.sh:",
         "# gpu_test NAME SKIP_RETURN_CODE TIMEOUT_S -- COMMAND..., run from the repository root."]
files = set()
for test in json.load(open(tests_json))["tests"]:
    if re.search(exclude, test["name"]):
        print("bundle.sh: left out " + test["name"])
        continue
    props = {p["name"]: p["value"] for p in test.get("properties", [])}
    command = [portable(a) for a in test["command"]]
    files.update(a for a in test["command"] if a.startswith(build + "/") and os.path.isfile(a))
    skip = str(props.get("SKIP_RETURN_CODE", "-1"))
    timeout = str(int(float(props.get("TIMEOUT", 600)))) if float(props.get("TIMEOUT", 600)) > 0 else "600"
    lines.append("gpu_test " + " ".join(shlex.quote(x) for x in [test["name"], skip, timeout, "--"] + command))
open(os.path.join(bundle, "gpu_tests.sh"), "w").write("\n".join(lines) + "\n")
open(os.path.join(bundle, "files.txt"), "w").write("".join(f[len(build) + 1:] + "\n" for f in sorted(files)))
EOF

# the test programs, plus what run.sh runs itself: libtile (by its SONAME, libtile.so.0: the programs'
# name for it; one copy, not its links), the examples, the benchmark
{
  cat "$bundle/files.txt"
  (cd "$build" && ls libtile.so.[0-9] libtile_rt.so.[0-9] tilec examples/vector_add examples/softmax examples/matmul examples/attention \
    bench/bench bench/launch_host 2>/dev/null)
} | sort -u >"$bundle/files.all"
while read -r file; do
  mkdir -p "$bundle/build/$(dirname "$file")"
  if file -L "$build/$file" | grep -q ELF; then
    strip --strip-unneeded -o "$bundle/build/$file" "$build/$file"
  else
    cp -L "$build/$file" "$bundle/build/$file"
  fi
done <"$bundle/files.all"
rm -f "$bundle/ctest.json" "$bundle/files.txt" "$bundle/files.all"

total=$(du -sb "$bundle" | cut -f1)
echo "bundle.sh: $bundle/ holds $(find "$bundle" -type f | wc -l) files, $((total / 1024 / 1024)) MiB:"
(cd "$bundle" && find . -type f -printf '%s %p\n' | sort -rn | awk '{printf "  %8.1f MiB  %s\n", $1 / 1048576, $2}')
if [ "$total" -gt "$limit" ]; then
  echo "bundle.sh: over the device tool's 64 MiB: leave tests out of the gpu label or shrink the largest files" >&2
  exit 1
fi
echo "bundle.sh: carry [\"$bundle\"] and run, from the repository root: bash tests/gpu/run.sh"
