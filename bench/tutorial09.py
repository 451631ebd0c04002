"""Triton's tutorial 09 (persistent matmul) kernels as published, compiled by tilec and by Triton, timed in
turns in one loop with cuBLAS, C = A B^T as the tutorial computes it, in fp16 or, as the tutorial's fp8
path runs them, in float8e4nv (fp8 A, B and C; cuBLAS is then torch._scaled_mm with unit scales).

    python3 bench/tutorial09.py --tilec build/tilec --tutorial PATH/09-persistent-matmul.py
        [--sizes 4096,8192] [--config 128x256x64:3:8] [--dtype fp16|fp8e4nv] [--csv FILE]

The tutorial's file is Triton's and stays out of the repository. Its kernels:

    tma                    matmul_kernel_tma, host tensor descriptors (TensorDescriptor.from_tensor)
    tma_persistent         matmul_kernel_tma_persistent, host descriptors, one program per SM
    descriptor_persistent  matmul_kernel_descriptor_persistent, pointers, the descriptors made in the kernel

Both sides run one config (--config BMxBNxBK:STAGES:WARPS, GROUP_SIZE_M 8, no warp specialisation, no
epilogue subtiling), not the tutorial's autotuning: the same kernel source and block shapes on both
sides. Each output is checked against the product in fp32 of the same inputs (fp8: within the output's
rounding, 2^-4 of the largest element); TFLOP/s count 2 M N K.
"""
import argparse
import csv
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from tile_cubin import TensorDesc, TileKernel  # noqa: E402
from triton_bench import Timer, load_source  # noqa: E402

KERNELS = {"tma": "matmul_kernel_tma", "tma_persistent": "matmul_kernel_tma_persistent",
           "descriptor_persistent": "matmul_kernel_descriptor_persistent"}


def parse_config(text):
    blocks, stages, warps = text.split(":")
    bm, bn, bk = (int(x) for x in blocks.split("x"))
    return bm, bn, bk, int(stages), int(warps)


class Problem:
    """A, B (stored [N, K]) and one C per side, for one size and config."""

    def __init__(self, m, n, k, config, dtype):
        torch.manual_seed(9)
        self.m, self.n, self.k, self.dtype = m, n, k, dtype
        # fp8: scaled so that C's elements stay well inside e4m3's range (448) at any K
        scale = 1.0 if dtype == torch.float16 else k ** -0.25
        self.a = (torch.randn(m, k, device="cuda", dtype=torch.float16) * scale).to(dtype)
        self.b = (torch.randn(n, k, device="cuda", dtype=torch.float16) * scale).to(dtype)
        self.want = torch.matmul(self.a.float(), self.b.float().T)
        self.bm, self.bn, self.bk, self.stages, self.warps = config
        self.sms = torch.cuda.get_device_properties("cuda").multi_processor_count
        self.tiles = triton_cdiv(m, self.bm) * triton_cdiv(n, self.bn)

    def grid(self, name):
        return (min(self.sms, self.tiles),) if name.endswith("persistent") else (self.tiles,)

    def constexprs(self, name):
        c = {"BLOCK_SIZE_M": self.bm, "BLOCK_SIZE_N": self.bn, "BLOCK_SIZE_K": self.bk, "GROUP_SIZE_M": 8,
             "WARP_SPECIALIZE": False}
        if name != "descriptor_persistent":
            c["FP8_OUTPUT"] = self.dtype == torch.float8_e4m3fn
        if name.endswith("persistent"):
            c.update(NUM_SMS=self.sms, EPILOGUE_SUBTILE=False)
        if name == "descriptor_persistent":
            c["FLATTEN"] = False
        return c

    def arguments(self, name, c, host_desc):
        """The kernel's run-time arguments: host descriptors (made by `host_desc`) or the tensors."""
        if name == "descriptor_persistent":
            return [self.a, self.b, c, self.m, self.n, self.k]
        return [host_desc(self.a, [self.bm, self.bk]), host_desc(self.b, [self.bn, self.bk]),
                host_desc(c, [self.bm, self.bn]), self.m, self.n, self.k]


def triton_cdiv(a, b):
    return (a + b - 1) // b


def tile_side(args, p, name):
    c = torch.empty(p.m, p.n, device="cuda", dtype=p.dtype)
    desc = lambda t, block: TensorDesc(t, list(t.shape), [t.stride(0), 1], block)  # noqa: E731
    run_args = p.arguments(name, c, desc)
    kernel = TileKernel(args.tilec, args.tutorial, run_args, p.constexprs(name), p.warps, kernel=KERNELS[name],
                        num_stages=p.stages)
    stream = torch.cuda.current_stream().cuda_stream
    return c, (lambda s: kernel.launch(p.grid(name), run_args, stream)), kernel.meta


def triton_side(module, p, name):
    from triton.tools.tensor_descriptor import TensorDescriptor
    c = torch.empty(p.m, p.n, device="cuda", dtype=p.dtype)
    run_args = p.arguments(name, c, lambda t, block: TensorDescriptor.from_tensor(t, block))
    fn = getattr(module, KERNELS[name]).fn  # the autotuner's kernel, run in the one config
    grid = p.grid(name)
    consts = p.constexprs(name)
    return c, (lambda s: fn[grid](*run_args, num_warps=p.warps, num_stages=p.stages, **consts))


def error(c, want):
    return ((c.float() - want).abs().max() / want.abs().max()).item()


def cublas_side(p):
    """torch.matmul, or for fp8 torch._scaled_mm with unit scales and an fp8 result."""
    if p.dtype == torch.float16:
        c = torch.empty(p.m, p.n, device="cuda", dtype=torch.float16)
        return c, (lambda s: torch.matmul(p.a, p.b.T, out=c))
    one = torch.ones((), device="cuda", dtype=torch.float32)
    out = {}

    def run(s):
        out["c"] = torch._scaled_mm(p.a, p.b.T, scale_a=one, scale_b=one, out_dtype=p.dtype)
    run(0)
    return out["c"], run


def one(args, module, timer, size, name, writer):
    dtype = {"fp16": torch.float16, "fp8e4nv": torch.float8_e4m3fn}[args.dtype]
    p = Problem(size, size, size, parse_config(args.config), dtype)
    sides, outputs, notes = {}, {}, []
    try:
        outputs["tile"], sides["tile"], meta = tile_side(args, p, name)
        regs = "%d/%d" % (meta["registers"], meta["spills"])
        tma = "TMA" if meta.get("tensor_maps") else "cp.async"
    except Exception as e:  # tilec refusing a kernel is a result to report
        print("# tile failed on %s at %d: %s" % (name, size, str(e).splitlines()[0]), file=sys.stderr)
        regs, tma = "", ""
    try:
        outputs["triton"], sides["triton"] = triton_side(module, p, name)
    except Exception as e:
        print("# triton failed on %s at %d: %s" % (name, size, str(e).splitlines()[0]), file=sys.stderr)
    try:
        outputs["cublas"], sides["cublas"] = cublas_side(p)
    except Exception as e:
        print("# cublas failed on %s at %d: %s" % (name, size, str(e).splitlines()[0]), file=sys.stderr)
    names = list(sides)
    ms = timer.interleaved_ms([sides[nm] for nm in names])
    tflops = {nm: 2.0 * size ** 3 / (t * 1e-3) * 1e-12 for nm, t in zip(names, ms)}
    bound = 1e-2 if p.dtype == torch.float16 else 0.07  # fp8 C rounds to 2^-4 of its value
    for nm in names:
        err = error(outputs[nm], p.want)
        if err > bound:
            notes.append("%s differs from torch.matmul by %.3g (relative to its largest element)" % (nm, err))
    ratio = lambda x, y: "%.3f" % (tflops[x] / tflops[y]) if x in tflops and y in tflops else ""  # noqa: E731
    row = {"kernel": name, "dtype": args.dtype, "size": size, "config": args.config,
           "tile_tflops": "%.1f" % tflops.get("tile", 0), "triton_tflops": "%.1f" % tflops.get("triton", 0),
           "cublas_tflops": "%.1f" % tflops.get("cublas", 0), "tile/triton": ratio("tile", "triton"),
           "tile/cublas": ratio("tile", "cublas"),
           "tile_registers": regs, "tile_loads": tma, "notes": "; ".join(notes)}
    writer(row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilec", required=True)
    ap.add_argument("--tutorial", required=True)
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--config", default="128x256x64:3:8")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "fp8e4nv"])
    ap.add_argument("--csv")
    args = ap.parse_args()
    module = load_source("persistent_matmul_tutorial", args.tutorial)
    import triton
    triton.set_allocator(lambda size, align, _: torch.empty(size, dtype=torch.int8, device="cuda"))
    timer = Timer(False)
    fields = ["kernel", "dtype", "size", "config", "tile_tflops", "triton_tflops", "cublas_tflops", "tile/triton",
              "tile/cublas", "tile_registers", "tile_loads", "notes"]
    out = open(args.csv, "w", newline="") if args.csv else None
    writers = [csv.DictWriter(sys.stdout, fields)] + ([csv.DictWriter(out, fields)] if out else [])
    print("# %s, %s, tutorial 09 kernels in one config, with cuBLAS" % (torch.cuda.get_device_name(), args.dtype))
    for w in writers:
        w.writeheader()
    for size in (int(s) for s in args.sizes.split(",")):
        for name in args.kernels.split(","):
            one(args, module, timer, size, name, lambda row: [w.writerow(row) for w in writers])
            sys.stdout.flush()
    if out:
        out.close()


if __name__ == "__main__":
    main()
