"""tile against Triton on memory-bound kernels over wide rows with many warps (bench/kernels/wide_rows.tl).

Both sides compile the same source: Triton imports the .tl file as a Python module, tile compiles it
with tilec to a cubin launched through the CUDA driver (tile_cubin.py).  They are timed in turns in one
loop by triton_bench.py's Timer (cold L2, CUDA events, medians), on the same inputs; each side's output is
checked against torch in float64, and each side's registers and spills are printed.

    python3 bench/wide_rows.py --tilec gpu-bundle/build/tilec [--csv FILE] [--rows M]
"""
import argparse
import csv
import os
import sys

import torch
import triton

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from tile_cubin import TileKernel  # noqa: E402
from triton_bench import Timer, input_sets, load_source  # noqa: E402

SOURCE = os.path.join(here, "kernels", "wide_rows.tl")


def triton_module():
    return load_source("wide_rows", SOURCE)


def softmax_bwd(rows):
    n = 32000
    dy = torch.randn(rows, n, device="cuda")
    y = torch.rand(rows, n, device="cuda")
    dx = torch.empty_like(y)
    want = y.double() * (dy.double() - (dy.double() * y.double()).sum(1, keepdim=True))
    return dict(kernel="softmax_bwd", args=[dx, dy, y, n, n], out=[dx], want=[want], grid=(rows,),
                meta={"BLOCK": 32768}, warps=32, bytes=3 * rows * n * 4, tol=1e-4,
                what="softmax backward, fp32 rows of 32000, BLOCK 32768, 32 warps")


def layer_norm_fwd(rows):
    n = 8192
    x = torch.randn(rows, n, device="cuda", dtype=torch.float16)
    w = torch.rand(n, device="cuda", dtype=torch.float16)
    b = torch.rand(n, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    mean = torch.empty(rows, device="cuda")
    rstd = torch.empty(rows, device="cuda")
    want = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double(), 1e-5)
    return dict(kernel="layer_norm_fwd", args=[x, y, w, b, mean, rstd, n, n, 1e-5], out=[y], want=[want],
                grid=(rows,), meta={"BLOCK": 8192}, warps=8, bytes=2 * rows * n * 2, tol=2e-2,
                what="layer-norm forward, fp16 rows of 8192, BLOCK 8192, 8 warps")


def row_max_argmax(rows):
    n = 1000
    x = torch.randn(rows, n, device="cuda")
    m = torch.empty(rows, device="cuda")
    a = torch.empty(rows, device="cuda", dtype=torch.int32)
    return dict(kernel="row_max_argmax", args=[x, m, a, n, n], out=[m, a], want=[x.double().max(1).values,
                x.argmax(1).int()], grid=(rows,), meta={"BLOCK": 1024}, warps=4, bytes=rows * n * 4, tol=0,
                what="row max and argmax, fp32 rows of 1000, BLOCK 1024, 4 warps")


def softmax_online(rows):
    n = 32768
    x = torch.randn(rows, n, device="cuda")
    y = torch.empty_like(x)
    return dict(kernel="softmax_online", args=[y, x, n, n], out=[y], want=[torch.softmax(x.double(), 1)],
                grid=(rows,), meta={"BLOCK": 4096}, warps=8, bytes=2 * rows * n * 4, tol=1e-4,
                what="two-pass online softmax, fp32 rows of 32768, BLOCK 4096, 8 warps")


def close(got, want, tol):
    if not tol:
        return torch.equal(got.to(want.dtype), want)
    return torch.allclose(got.double(), want.double(), rtol=tol, atol=tol)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilec", required=True)
    parser.add_argument("--csv")
    parser.add_argument("--rows", type=int, default=4096)
    opts = parser.parse_args()
    module = triton_module()
    timer = Timer(False)
    gpu = torch.cuda.get_device_name()
    rows_out = []
    print("%s; tile and Triton from %s, timed in turns" % (gpu, os.path.relpath(SOURCE)))
    for make in (softmax_bwd, layer_norm_fwd, row_max_argmax, softmax_online):
        c = make(opts.rows)
        fn = getattr(module, c["kernel"])
        compiled = fn[c["grid"]](*c["args"], **c["meta"], num_warps=c["warps"])
        tk = TileKernel(opts.tilec, SOURCE, c["args"], c["meta"], c["warps"], kernel=c["kernel"])
        stream = torch.cuda.current_stream().cuda_stream
        launches = {"triton": lambda s: fn[c["grid"]](*c["args"], **c["meta"], num_warps=c["warps"]),
                    "tile": lambda s: tk.launch(c["grid"], c["args"], stream)}
        ok = {}
        for impl, launch in launches.items():
            for o in c["out"]:
                o.fill_(-7)
            launch(0)
            torch.cuda.synchronize()
            ok[impl] = all(close(o, w, c["tol"]) for o, w in zip(c["out"], c["want"]))
        ms = dict(zip(launches, timer.interleaved_ms(list(launches.values()), 1)))
        gbps = {k: c["bytes"] / (v * 1e6) for k, v in ms.items()}
        print("  %s, %d rows:" % (c["what"], opts.rows))
        print("    triton %7.1f GB/s  %3d registers %4d bytes spilled%s" % (
            gbps["triton"], compiled.n_regs, compiled.n_spills, "" if ok["triton"] else "  WRONG RESULT"))
        print("    tile   %7.1f GB/s  %3d registers %4d bytes spilled%s" % (
            gbps["tile"], tk.meta["registers"], tk.meta["spills"], "" if ok["tile"] else "  WRONG RESULT"))
        print("    tile / triton %.3f" % (gbps["tile"] / gbps["triton"]))
        for impl in launches:
            rows_out.append([c["kernel"], opts.rows, impl, "%.5f" % ms[impl], "%.1f" % gbps[impl], gpu])
    if opts.csv:
        with open(opts.csv, "w", newline="") as f:
            csv.writer(f).writerows([["kernel", "rows", "impl", "ms", "gbps", "gpu"]] + rows_out)


if __name__ == "__main__":
    main()
