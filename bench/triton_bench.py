#!/usr/bin/env python3
"""Triton and torch on bench/bench.c's benchmarks, measured the same way.

Runs on the GPU machine (python3 with torch and triton).  The kernels are the
tutorials' as the source documents give them (/work/shared/seeds/004_*.txt):
add_kernel (tutorial 01), softmax_kernel with its host-side BLOCK_SIZE and
num_warps logic (tutorial 02), and the body of matmul_kernel (tutorial 03) for
the compile time.  Measured, as bench.c measures tile:
  - vector add, fp32, 2^12..2^28 elements (GB/s = 3 * n * 4 bytes / time),
    Triton's add_kernel and torch's x + y;
  - softmax, fp32, M = 4096, N = 256..32768 (GB/s = 2 * M * N * 4 / time),
    Triton's softmax_kernel and torch.softmax;
  - matmul, fp16 in and out, square 256..8192 and LLM shapes (M = 16..8192,
    (N, K) in (4096, 4096), (14336, 4096), (4096, 14336); TFLOP/s =
    2 * M * N * K / time): tutorial 03's matmul_kernel with its
    @triton.autotune configs (key M, N, K; no epilogue) and cuBLAS through
    torch.matmul (impl "cublas");
    each after 100 ms of untimed launches (clocks up again after compiling
    or autotuning), with CUDA events around one launch, the L2 flushed before it by
    writing a 256 MB buffer (outside the timed region), inputs rotated over
    copies when they fit in L2, the median of many repetitions, the result
    checked once;
  - Triton's cold compile time (a fresh TRITON_CACHE_DIR, in a new process:
    the first call minus a warm call) and its warm one (the same cache
    directory, another process);
  - the host time per launch of Triton's add_kernel[grid](...) and of torch's
    torch.add(x, y, out=out) over 1024 elements (10000+ calls, then a sync).
CSV rows as bench.c writes them: kernel,size,impl,ms,gbps,tflops,gpu.

    python3 bench/triton_bench.py [--csv FILE] [--quick] [--only vector_add,softmax,compile,launch,matmul]
                                  [--time-limit SECONDS] [--tilec PATH]
--tilec: tile's vector add and softmax are timed here too (impl tile_py), from tilec's cubin
launched through the CUDA driver (bench/tile_cubin.py): the same harness as
Triton's, to tell the kernels' difference from the harnesses'.
--time-limit: matmul shapes not started within that many seconds are skipped.
"""
import argparse
import csv
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tutorial_kernels import MATMUL_CONFIGS, add_kernel, matmul_kernel, softmax_kernel  # noqa: E402,F401

FLUSH_BYTES = 256 << 20
L2_BYTES = 64 << 20  # at least the L2 of an H100/H200 (50 MB), as bench.c
MAX_SETS = 8
MAX_REPS = 1000
TARGET_MS = 200.0
WARMUP_MS = 100.0  # untimed launches first: clocks up after compiling or tuning
COMPILE_REPS = 3  # each a pair of new processes (cold, then warm)
LAUNCHES = 20000


def read_sizes():
    """bench/sizes.def, the lists bench.c measures too: {NAME: [values]}."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sizes.def")) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    return {name: [int(v) for v in values.split(",")] for name, values in re.findall(r"SIZES\((\w+),([^)]*)\)", text)}


SIZES = read_sizes()
SOFTMAX_COLS = SIZES["SOFTMAX_COLS"]
MATMUL_SQUARE = SIZES["MATMUL_SQUARE"]
MATMUL_LLM_M = SIZES["MATMUL_LLM_M"]
MATMUL_LLM_NK = list(zip(SIZES["MATMUL_LLM_N"], SIZES["MATMUL_LLM_K"]))
DEVICE = "cuda"


# ---- the tutorials' kernels (bench/tutorial_kernels.py) ------------------------------

# a JITFunction of its own, so that the compile-time probe's matmul_kernel stays untouched
matmul_kernel_autotuned = triton.autotune(configs=MATMUL_CONFIGS, key=['M', 'N', 'K'])(triton.jit(matmul_kernel.fn))


# Compiled first in each compile probe, so that Triton's one-time set-up is not counted.
@triton.jit
def warm_up_kernel(x_ptr):
    tl.store(x_ptr + tl.arange(0, 16), tl.zeros((16, ), dtype=tl.float32))


# ---- the tutorials' host code ----------------------------------------------------------

def add_launch(x, y, output):
    """Tutorial 01's add(), writing into a given output (bench.c launches into preallocated buffers too)."""
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


def softmax_launch(x, y):
    """Tutorial 02's softmax(), writing into a given output."""
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 4
    if BLOCK_SIZE >= 2048:
        num_warps = 8
    if BLOCK_SIZE >= 4096:
        num_warps = 16
    softmax_kernel[(n_rows, )](y, x, x.stride(0), y.stride(0), n_cols, num_warps=num_warps, BLOCK_SIZE=BLOCK_SIZE)
    return y


def matmul_call(a, b, c):
    """Tutorial 03's matmul(): its grid lambda and the kernel's run-time arguments."""
    M, K = a.shape
    K, N = b.shape
    grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), )
    return grid, (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def matmul_launch(a, b, c):
    """Tutorial 03's matmul() with config 0 of its autotune list and the leaky_relu epilogue."""
    grid, args = matmul_call(a, b, c)
    matmul_kernel[grid](*args, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
                        ACTIVATION="leaky_relu", num_stages=3, num_warps=8)
    return c


def matmul_autotuned_launch(a, b, c):
    """Tutorial 03's matmul(): the autotuned kernel, no epilogue, into a given output."""
    grid, args = matmul_call(a, b, c)
    matmul_kernel_autotuned[grid](*args, ACTIVATION="")
    return c


# ---- timing, as bench.c ---------------------------------------------------------------

def load_source(name, path):
    """The Python file at path (a Triton tutorial, a kernel file) run as module `name`."""
    loader = importlib.machinery.SourceFileLoader(name, path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    loader.exec_module(module)
    return module


class Timer:
    def __init__(self, quick):
        self.flush = torch.empty(FLUSH_BYTES if not quick else 1 << 20, dtype=torch.uint8, device=DEVICE)
        self.min_reps, self.max_reps = (2, 3) if quick else (20, MAX_REPS)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self.flush.fill_(0)
        start.record()
        self.flush.fill_(1)
        end.record()
        torch.cuda.synchronize()
        self.flush_ms = start.elapsed_time(end)

    def median_ms(self, launch, sets):
        """The median time of one launch(set) with a cold L2, the input copies taken in turn."""
        return self.interleaved_ms([launch], sets)[0]

    def interleaved_ms(self, launches, sets=1):
        """The median time of each launch(set) with a cold L2, measured in turns (a, b, c, then c, b, a, ...)
        in one loop, so that every kernel meets the same clocks and power: a GPU at its power limit clocks
        down over seconds, and a kernel timed after another one's run sees a different GPU."""
        each = []
        for launch in launches:  # compiles, every set gets a result; then the mean of 5 back-to-back launches
            for s in range(sets):
                launch(s)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for i in range(5):
                launch(i % sets)
            end.record()
            torch.cuda.synchronize()
            each.append(start.elapsed_time(end) / 5)
        for i in range(min(20000, int(WARMUP_MS / sum(each))) if self.min_reps > 2 else 0):  # as bench.c
            for launch in launches:
                launch(i % sets)
        n = len(launches)
        reps = max(self.min_reps, min(self.max_reps // n, int(TARGET_MS * n / (sum(each) + n * self.flush_ms))))
        events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in launches]
                  for _ in range(reps)]
        for r in range(reps):
            for i in (range(n) if r % 2 == 0 else reversed(range(n))):
                self.flush.fill_((r * n + i) & 0xff)
                events[r][i][0].record()
                launches[i](r % sets)
                events[r][i][1].record()
        torch.cuda.synchronize()
        return [statistics.median(events[r][i][0].elapsed_time(events[r][i][1]) for r in range(reps))
                for i in range(n)]


def input_sets(nbytes):
    """How many copies of a working set of nbytes to rotate through (as bench.c)."""
    if nbytes >= L2_BYTES:
        return 1
    return max(2, min(MAX_SETS, FLUSH_BYTES // nbytes))


class Results:
    def __init__(self, path, gpu):
        self.gpu = gpu.replace(",", " ")
        self.file = open(path, "w", newline="") if path else None
        self.writer = csv.writer(self.file) if self.file else None
        if self.writer:
            self.writer.writerow(["kernel", "size", "impl", "ms", "gbps", "tflops", "gpu"])
        self.failures = 0

    def row(self, kernel, size, impl, ms, gbps=None, tflops=None):
        if self.writer:
            self.writer.writerow([kernel, size, impl, "%.6f" % ms, "" if gbps is None else "%.3f" % gbps,
                                  "" if tflops is None else "%.3f" % tflops, self.gpu])
            self.file.flush()


# ---- the benchmarks -------------------------------------------------------------------

def tile_vector_add(tilec, x, y, out):
    """tile's vector add example kernel, from tilec's cubin, with the tutorial's BLOCK_SIZE (1024) and 4 warps."""
    from tile_cubin import TileKernel
    n = out.numel()
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "vector_add", "vector_add.tl")
    k = TileKernel(tilec, source, [x, y, out, n], {"BLOCK_SIZE": 1024}, 4)
    grid = (triton.cdiv(n, 1024), )
    return lambda xs, ys, outs: k.launch(grid, [xs, ys, outs, n], torch.cuda.current_stream().cuda_stream)


def bench_vector_add(timer, results, quick, tilec=None):
    print("vector add, fp32 (GB/s = 3 * n * 4 bytes / time)")
    sizes = [2 ** e for e in (range(12, 15, 2) if quick else range(12, 29))]
    for n in sizes:
        sets = input_sets(3 * 4 * n)
        x = [torch.rand(n, device=DEVICE, dtype=torch.float32) for _ in range(sets)]
        y = [torch.rand(n, device=DEVICE, dtype=torch.float32) for _ in range(sets)]
        out = [torch.empty(n, device=DEVICE, dtype=torch.float32) for _ in range(sets)]
        impls = {"triton": lambda s: add_launch(x[s], y[s], out[s]),
                 "torch": lambda s: torch.add(x[s], y[s], out=out[s])}
        if tilec:  # tile's cubin timed by this harness too, after Triton's and torch's runs
            tile_launch = tile_vector_add(tilec, x[0], y[0], out[0])
            impls["tile_py"] = lambda s: tile_launch(x[s], y[s], out[s])
        for impl, launch in impls.items():
            for o in out:
                o.fill_(float("nan"))
            ms = timer.median_ms(launch, sets)
            gbps = 3 * 4 * n / (ms * 1e6)
            ok = all(torch.equal(out[s], x[s] + y[s]) for s in range(sets))
            results.failures += not ok
            print("  vector_add  n=%-10d %-6s %9.4f ms %8.1f GB/s%s" % (n, impl, ms, gbps, "" if ok else "  WRONG RESULT"))
            results.row("vector_add", n, impl, ms, gbps)
        del x, y, out
        torch.cuda.empty_cache()


def tile_softmax(tilec, x, y):
    """tile's softmax example kernel, from tilec's cubin, with the tutorial's BLOCK_SIZE and num_warps."""
    from tile_cubin import TileKernel
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    warps = 16 if block >= 4096 else 8 if block >= 2048 else 4
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "softmax", "softmax.tl")
    k = TileKernel(tilec, source, [y, x, x.stride(0), y.stride(0), cols], {"BLOCK_SIZE": block}, warps)
    return lambda xs, ys: k.launch((rows, ), [ys, xs, xs.stride(0), ys.stride(0), cols],
                                   torch.cuda.current_stream().cuda_stream)


def bench_softmax(timer, results, quick, tilec=None):
    rows = 64 if quick else 4096
    print("softmax, fp32, M=%d (GB/s = 2 * M * N * 4 bytes / time)" % rows)
    for cols in (SIZES["SOFTMAX_COLS_QUICK"] if quick else SOFTMAX_COLS):
        sets = input_sets(2 * 4 * rows * cols)
        x = [torch.randn(rows, cols, device=DEVICE, dtype=torch.float32) for _ in range(sets)]
        y = [torch.empty(rows, cols, device=DEVICE, dtype=torch.float32) for _ in range(sets)]
        impls = {"triton": lambda s: softmax_launch(x[s], y[s]),
                 "torch": lambda s: torch.softmax(x[s], dim=-1)}
        if tilec:  # tile's cubin timed by this harness too: the same flush, events and data as Triton's
            tile_launch = tile_softmax(tilec, x[0], y[0])
            impls["tile_py"] = lambda s: tile_launch(x[s], y[s])
        for impl, launch in impls.items():
            ms = timer.median_ms(launch, sets)
            gbps = 2 * 4 * rows * cols / (ms * 1e6)
            want = torch.softmax(x[0].double(), dim=-1)
            if impl == "tile_py":
                y[0].fill_(float("nan"))
                launch(0)
            got = y[0] if impl in ("triton", "tile_py") else torch.softmax(x[0], dim=-1)
            ok = torch.allclose(got.double(), want, rtol=1e-4, atol=1e-9)
            results.failures += not ok
            print("  softmax     %dx%-6d %-6s %9.4f ms %8.1f GB/s%s" % (rows, cols, impl, ms, gbps,
                                                                         "" if ok else "  WRONG RESULT"))
            results.row("softmax", cols, impl, ms, gbps)
        del x, y
        torch.cuda.empty_cache()


def matmul_shapes(quick):
    """(group, M, N, K) in bench.c's order."""
    if quick:
        return ([("square", s, s, s) for s in SIZES["MATMUL_SQUARE_QUICK"]] +
                [("llm", 16, n // 32, k // 32) for n, k in MATMUL_LLM_NK])
    return ([("square", s, s, s) for s in MATMUL_SQUARE] +
            [("llm", m, n, k) for n, k in MATMUL_LLM_NK for m in MATMUL_LLM_M])


def random_halves(rows, cols):
    """fp16 with magnitudes in [2^-5, 2) and random signs, as bench.c's inputs."""
    exponent = torch.randint(-5, 1, (rows, cols), device=DEVICE, dtype=torch.int32).float()
    mantissa = 1 + torch.randint(0, 1024, (rows, cols), device=DEVICE).float() / 1024
    sign = torch.randint(0, 2, (rows, cols), device=DEVICE).float() * 2 - 1
    return (sign * mantissa * torch.exp2(exponent)).half()


def matmul_ok(a, b, c):
    """256 sampled entries against fp64 sums: within 2^-9 of the value plus 2^-14 of sum |a*b|, as bench.c."""
    rows = torch.randint(0, a.shape[0], (256, ), device=DEVICE)
    cols = torch.randint(0, b.shape[1], (256, ), device=DEVICE)
    products = a[rows].double() * b[:, cols].t().double()
    want, magnitude = products.sum(dim=1), products.abs().sum(dim=1)
    got = c[rows, cols].double()
    return bool(((got - want).abs() <= 2 ** -9 * want.abs() + 2 ** -14 * magnitude).all())


def bench_matmul(timer, results, quick, deadline):
    print("matmul, fp16 (fp32 accumulation): Triton's autotuned tutorial kernel and cuBLAS "
          "(TFLOP/s = 2 * M * N * K / time)")
    for group, m, n, k in matmul_shapes(quick):
        if deadline and time.time() > deadline:
            print("  matmul %dx%dx%d: skipped, --time-limit reached" % (m, n, k))
            continue
        sets = input_sets(2 * (m * k + k * n + m * n))
        a = [random_halves(m, k) for _ in range(sets)]
        b = [random_halves(k, n) for _ in range(sets)]
        c = [torch.empty(m, n, device=DEVICE, dtype=torch.float16) for _ in range(sets)]
        impls = {"triton": lambda s: matmul_autotuned_launch(a[s], b[s], c[s]),
                 "cublas": lambda s: torch.matmul(a[s], b[s], out=c[s])}
        for impl, launch in impls.items():
            for o in c:
                o.fill_(float("nan"))
            ms = timer.median_ms(launch, sets)
            tflops = 2 * m * n * k / (ms * 1e9)
            ok = all(matmul_ok(a[s], b[s], c[s]) for s in range(sets))
            results.failures += not ok
            chosen = ""
            if impl == "triton" and matmul_kernel_autotuned.best_config is not None:
                chosen = "  (%s)" % matmul_kernel_autotuned.best_config
            print("  matmul %-6s %-17s %-6s %9.4f ms %7.1f TFLOP/s%s%s" % (group, "%dx%dx%d" % (m, n, k), impl, ms,
                                                                          tflops, chosen, "" if ok else "  WRONG RESULT"))
            results.row("matmul_" + group, "%dx%dx%d" % (m, n, k), impl, ms, tflops=tflops)
        del a, b, c
        torch.cuda.empty_cache()


def matmul_compile_configs(a, b, c):
    """The 8 autotune configs compiled, as the autotuner's first tuning compiles them (one after another;
    ACTIVATION="", so that none is the "matmul" case's kernel), without launching."""
    args = matmul_call(a, b, c)[1]
    for cfg in MATMUL_CONFIGS:
        matmul_kernel.warmup(*args, grid=(1, ), ACTIVATION="", num_warps=cfg.num_warps, num_stages=cfg.num_stages,
                             **cfg.kwargs)


def compile_probe():
    """In a new process (TRITON_CACHE_DIR set by the parent): the first call of each kernel, then a second one."""
    warm_up_kernel[(1, )](torch.zeros(16, device=DEVICE))
    torch.cuda.synchronize()
    x, y = torch.rand(98432, device=DEVICE), torch.rand(98432, device=DEVICE)
    s = torch.randn(1823, 781, device=DEVICE)
    a = torch.randn(512, 512, device=DEVICE, dtype=torch.float16)
    b = torch.randn(512, 512, device=DEVICE, dtype=torch.float16)
    c = torch.empty(512, 512, device=DEVICE, dtype=torch.float16)
    cases = {"vector_add": lambda: add_launch(x, y, torch.empty_like(x)),
             "softmax": lambda: softmax_launch(s, torch.empty_like(s)),
             "matmul": lambda: matmul_launch(a, b, c),
             "matmul_8_configs": lambda: matmul_compile_configs(a, b, c)}
    times = {}
    for name, call in cases.items():
        calls = []
        for _ in range(2):
            t0 = time.perf_counter()
            call()
            torch.cuda.synchronize()
            calls.append(time.perf_counter() - t0)
        times[name] = 1e3 * (calls[0] - calls[1])
    print(json.dumps(times))


def run_probe(cache_dir):
    env = dict(os.environ, TRITON_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--compile-probe"], env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError("the compile probe failed:\n" + done.stdout + done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_compile(results, quick):
    reps = 1 if quick else COMPILE_REPS
    print("Triton compile time (first call minus a warm call, new process; median of %d)" % reps)
    cold, warm = {}, {}
    for _ in range(reps):
        cache_dir = tempfile.mkdtemp(prefix="triton-bench-cache-")
        try:
            for name, ms in run_probe(cache_dir).items():
                cold.setdefault(name, []).append(ms)
            for name, ms in run_probe(cache_dir).items():
                warm.setdefault(name, []).append(ms)
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
    for name in cold:
        c, w = statistics.median(cold[name]), statistics.median(warm[name])
        print("  %-10s cold %9.2f ms   warm (disk cache) %7.3f ms" % (name, c, w))
        results.row("compile_cold", name, "triton", c)
        results.row("compile_warm", name, "triton", w)


def host_time(call, launches):
    for _ in range(100):
        call()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(launches):
        call()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return 1e6 * (t1 - t0) / launches, 1e6 * (t2 - t0) / launches


def bench_launch(results, quick):
    launches = 200 if quick else LAUNCHES
    n = 1024
    x, y, out = (torch.zeros(n, device=DEVICE) for _ in range(3))
    grid = lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']), )
    calls = {"triton": lambda: add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024),
             "torch": lambda: torch.add(x, y, out=out)}
    print("host time per launch (vector add of 1024 fp32, %d launches)" % launches)
    for impl, call in calls.items():
        host_us, total_us = host_time(call, launches)
        print("  %-6s %.2f us per launch on the host; %.2f us with the final synchronise" % (impl, host_us, total_us))
        results.row("launch_host", n, impl, host_us * 1e-3)
        results.row("launch_sync", n, impl, total_us * 1e-3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", help="write the CSV rows here")
    parser.add_argument("--quick", action="store_true", help="a few small sizes (a smoke run)")
    parser.add_argument("--only", default="vector_add,softmax,compile,launch,matmul", help="comma-separated parts")
    parser.add_argument("--time-limit", type=float, default=0, help="seconds after which matmul shapes are skipped")
    parser.add_argument("--tilec", help="also time tile's vector add and softmax (impl tile_py): tilec's cubin, "
                        "launched from here")
    parser.add_argument("--compile-probe", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compile_probe:
        return compile_probe()
    if not torch.cuda.is_available():
        print("SKIP: no GPU visible to torch")
        return 77
    gpu = torch.cuda.get_device_name(0)
    print("triton_bench: %s, torch %s, triton %s" % (gpu, torch.__version__, triton.__version__))
    results = Results(args.csv, gpu)
    timer = Timer(args.quick)
    deadline = time.time() + args.time_limit if args.time_limit > 0 else None
    parts = {"vector_add": lambda: bench_vector_add(timer, results, args.quick, args.tilec),
             "softmax": lambda: bench_softmax(timer, results, args.quick, args.tilec),
             "compile": lambda: bench_compile(results, args.quick),
             "launch": lambda: bench_launch(results, args.quick),
             "matmul": lambda: bench_matmul(timer, results, args.quick, deadline)}
    for name, part in parts.items():
        if name not in args.only.split(","):
            continue
        try:
            part()
        except Exception:  # one part failing must not lose the others' numbers
            traceback.print_exc()
            results.failures += 1
    print("triton_bench: %s" % ("all results match" if not results.failures else "%d FAILURES" % results.failures))
    return 1 if results.failures else 0


if __name__ == "__main__":
    sys.exit(main())
