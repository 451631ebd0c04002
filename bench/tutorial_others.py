"""Triton's tutorials 04, 05, 07, 08 and 11 against tile compiling the same kernels, timed in one loop.

Issue #19 asks that a tutorial kernel tile compiles be no slower than Triton's by more than 10% at the
tutorials' sizes; 01-03 are the examples (bench.c, triton_bench.py), 06 attention.py, 09 tutorial09.py.
Each tutorial file (Triton's code, outside the repository) is loaded without its top-level statements
(its tests and benchmarks): imports, definitions and constant assignments only. Both sides launch the
kernel with the same arguments and constexprs (an autotuned kernel in one config, the autotuner's own
function), tile's through its cubin (tile_cubin.py); outputs are checked against each other.

    python3 bench/tutorial_others.py --tilec build/tilec --tutorials DIR [--csv OUT.csv]
"""
import argparse
import ast
import csv
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tile_cubin import TileKernel  # noqa: E402
from triton_bench import Timer  # noqa: E402


def _calls_local_or_torch(node, local):
    """Whether an expression calls a function the module defines or one of torch's (making tensors)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            while isinstance(f, ast.Attribute):
                f = f.value
            if isinstance(f, ast.Name) and (f.id in local or f.id == "torch"):
                return True
    return False


def load_definitions(path, name):
    """The tutorial's imports (a `try` of them too), functions, classes and constant assignments, run as
    module `name`
    (@triton.jit needs the source in a file: linecache reads `path`)."""
    tree = ast.parse(open(path).read(), path)
    local = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    keep = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Try)) or
            (isinstance(n, (ast.Assign, ast.AnnAssign)) and not _calls_local_or_torch(n.value, local))]
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module  # @triton.jit reads the function's module
    for n in keep:  # one at a time: an assignment from a dropped test's tensor (07's numel()) is skipped
        try:
            exec(compile(ast.Module(body=[n], type_ignores=[]), path, "exec"), module.__dict__)
        except Exception:  # noqa: BLE001: what a kernel needs is its imports and definitions
            if not isinstance(n, (ast.Assign, ast.AnnAssign, ast.Try)):
                raise
    return module


def jit_fn(module, kernel):
    """The @triton.jit function under any @triton.autotune / @triton.heuristics."""
    from triton.runtime.jit import JITFunction
    fn = getattr(module, kernel)
    while not isinstance(fn, JITFunction):
        fn = fn.fn
    return fn


class Case:
    """One kernel at one size: its arguments (torch tensors and numbers), constexprs, grid, warps, and the
    outputs to compare; `bytes` or `flops` give the rate."""

    def __init__(self, tutorial, kernel, label, args, consts, grid, warps, outputs, nbytes=0, flops=0, stages=None):
        self.__dict__.update(tutorial=tutorial, kernel=kernel, label=label, args=args, consts=consts, grid=grid,
                             warps=warps, outputs=outputs, nbytes=nbytes, flops=flops, stages=stages)


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def dropout_cases(n):
    x, keep, out = rand(n), (torch.rand(n, device="cuda") > 0.5).to(torch.int8), rand(n)
    yield Case("04-low-memory-dropout", "_dropout", "n=%d" % n, [x, keep, out, n, 0.5], {"BLOCK_SIZE": 1024},
               (triton_cdiv(n, 1024),), 4, [out], nbytes=n * 9)
    out2 = rand(n)
    yield Case("04-low-memory-dropout", "_seeded_dropout", "n=%d" % n, [x, out2, n, 0.5, 123], {"BLOCK_SIZE": 1024},
               (triton_cdiv(n, 1024),), 4, [out2], nbytes=n * 8)


def layer_norm_cases(m, n):
    """The tutorial's launcher's blocks and warps: BLOCK_SIZE the next power of two of N, warps BLOCK / 256
    (1..8); the backward's GROUP_SIZE_M as its table gives."""
    block = 1 << (n - 1).bit_length()
    warps = min(max(block // 256, 1), 8)
    x, w, b = rand(m, n, dtype=torch.float16), rand(n, dtype=torch.float16), rand(n, dtype=torch.float16)
    y, mean, rstd = torch.empty_like(x), rand(m), rand(m)
    yield Case("05-layer-norm", "_layer_norm_fwd_fused", "%dx%d" % (m, n), [x, y, w, b, mean, rstd, n, n, 1e-5],
               {"BLOCK_SIZE": block}, (m,), warps, [y, mean, rstd], nbytes=m * n * 4)
    group = 64 if n > 8192 else 96 if n > 4096 else 128 if n > 1024 else 256
    dy, dx = rand(m, n, dtype=torch.float16), torch.empty_like(x)
    dw_part, db_part = torch.zeros(group, n, device="cuda", dtype=torch.float16), torch.zeros_like(x[:group])
    locks = torch.zeros(2 * group, device="cuda", dtype=torch.int32)
    mean.uniform_(-0.1, 0.1)
    rstd.uniform_(0.5, 1.5)
    # the partial sums of dw and db go through locks in whatever order programs take them: only dx is compared
    yield Case("05-layer-norm", "_layer_norm_bwd_dx_fused", "%dx%d" % (m, n),
               [dx, dy, dw_part, db_part, x, w, mean, rstd, locks, n, n], {"GROUP_SIZE_M": group, "BLOCK_SIZE_N": block},
               (m,), warps, [dx], nbytes=m * n * 6)
    dw, db = rand(n, dtype=torch.float16), rand(n, dtype=torch.float16)
    part_w, part_b = rand(group, n, dtype=torch.float16), rand(group, n, dtype=torch.float16)
    yield Case("05-layer-norm", "_layer_norm_bwd_dwdb", "%dx%d" % (group, n), [part_w, part_b, dw, db, group, n],
               {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128}, (triton_cdiv(n, 128),), 4, [dw, db], nbytes=group * n * 4)


def asin_cases(n):
    x, y = torch.rand(n, device="cuda"), rand(n)
    yield Case("07-extern-functions", "asin_kernel", "n=%d" % n, [x, y, n], {"BLOCK_SIZE": 1024},
               (triton_cdiv(n, 1024),), 4, [y], nbytes=n * 8)


def grouped_gemm_case(sizes):
    """The tutorial's benchmark group (squares), config 0 of the pointer kernel (128 x 128 x 32, 84 programs)."""
    a = [rand(s, s, dtype=torch.float16) for s in sizes]
    b = [rand(s, s, dtype=torch.float16) for s in sizes]
    c = [torch.empty(s, s, device="cuda", dtype=torch.float16) for s in sizes]
    table = lambda ts: torch.tensor([t.data_ptr() for t in ts], device="cuda")  # noqa: E731
    g_sizes = torch.tensor([v for s in sizes for v in (s, s, s)], device="cuda", dtype=torch.int32)
    g_lds = torch.tensor([v for s in sizes for v in (s, s, s)], device="cuda", dtype=torch.int32)
    consts = {"NUM_SM": 84, "BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32}
    case = Case("08-grouped-gemm", "grouped_matmul_kernel", "group %s" % "/".join(map(str, sizes)),
                [table(a), table(b), table(c), g_sizes, g_lds, len(sizes)], consts, (84,), 4, c,
                flops=sum(2 * s ** 3 for s in sizes))
    case.keep = (a, b)  # the tables hold their addresses
    return case


def gdc_cases(n):
    x, y, out = rand(n), rand(n), rand(n)
    for gdc in (False, True):
        yield Case("11-programmatic-dependent-launch", "add_kernel", "n=%d gdc=%s" % (n, gdc), [x, y, out, n],
                   {"BLOCK_SIZE": 1024, "USE_GDC": gdc}, (triton_cdiv(n, 1024),), 4, [out], nbytes=n * 12)


def triton_cdiv(a, b):
    return (a + b - 1) // b


def cases():
    yield from dropout_cases(1 << 24)
    for n in (1024, 4096, 8192, 1000):  # and a width that is no multiple of 16 (i32 sizes, not i32:16)
        yield from layer_norm_cases(4096, n)
    yield from asin_cases(98432)
    yield from asin_cases(1 << 24)
    yield grouped_gemm_case([1024, 512, 256, 128])
    yield grouped_gemm_case([1024, 1024, 1024, 1024])
    yield from gdc_cases(1 << 24)


def one(args, modules, timer, case, writer):
    module = modules.setdefault(case.tutorial, load_definitions(os.path.join(args.tutorials, case.tutorial + ".tl"),
                                                                case.tutorial.replace("-", "_")))
    path = os.path.join(args.tutorials, case.tutorial + ".tl")
    tile = TileKernel(args.tilec, path, case.args, case.consts, case.warps, kernel=case.kernel, num_stages=case.stages)
    stream = torch.cuda.current_stream().cuda_stream
    fn = jit_fn(module, case.kernel)
    extra = {"num_stages": case.stages} if case.stages else {}
    sides = {"tile": lambda s: tile.launch(case.grid, case.args, stream),
             "triton": lambda s: fn[case.grid](*case.args, num_warps=case.warps, **case.consts, **extra)}
    results = {}
    for name, launch in sides.items():
        for o in case.outputs:
            o.fill_(float("nan"))
        launch(0)
        torch.cuda.synchronize()
        results[name] = [o.float().clone() for o in case.outputs]
    close = all(torch.allclose(t, r, rtol=2e-2, atol=2e-2, equal_nan=True)
                for t, r in zip(results["tile"], results["triton"]))
    ms = timer.interleaved_ms([sides["tile"], sides["triton"]])
    rate = lambda t: case.nbytes / t * 1e-6 if case.nbytes else case.flops / t * 1e-9  # noqa: E731
    row = {"tutorial": case.tutorial[:2], "kernel": case.kernel, "size": case.label,
           "tile_ms": "%.4f" % ms[0], "triton_ms": "%.4f" % ms[1],
           "unit": "GB/s" if case.nbytes else "TFLOP/s", "tile": "%.1f" % rate(ms[0]), "triton": "%.1f" % rate(ms[1]),
           "tile/triton": "%.3f" % (ms[1] / ms[0]), "registers": "%d/%d" % (tile.meta["registers"], tile.meta["spills"]),
           "outputs": "equal" if close else "DIFFER"}
    writer(row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilec", required=True)
    ap.add_argument("--tutorials", required=True, help="the folder of the tutorials' .tl copies")
    ap.add_argument("--only", default="")
    ap.add_argument("--csv")
    args = ap.parse_args()
    torch.manual_seed(0)
    timer = Timer(False)
    fields = ["tutorial", "kernel", "size", "tile_ms", "triton_ms", "unit", "tile", "triton", "tile/triton",
              "registers", "outputs"]
    out = open(args.csv, "w", newline="") if args.csv else None
    writers = [csv.DictWriter(sys.stdout, fields)] + ([csv.DictWriter(out, fields)] if out else [])
    print("# %s: tutorials 04, 05, 07, 08, 11, tile and Triton on the same kernels and arguments" %
          torch.cuda.get_device_name())
    for w in writers:
        w.writeheader()
    modules = {}
    for case in cases():
        if args.only not in case.kernel:
            continue
        try:
            one(args, modules, timer, case, lambda row: [w.writerow(row) for w in writers])
        except Exception as e:  # a side that fails is a result to report
            print("# %s %s failed: %s" % (case.kernel, case.label, str(e).splitlines()[0] if str(e) else repr(e)))
        sys.stdout.flush()
    if out:
        out.close()


if __name__ == "__main__":
    main()
