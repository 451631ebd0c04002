"""tile and Triton on the same matmul config, one config at a time: each of
the tutorial's autotune configs at a few shapes, both timed by
triton_bench.py's Timer (tile's kernel: tilec's cubin, bench/tile_cubin.py),
to tell a slower kernel from a different autotuner choice.  With --rounds N
every figure is measured N times (tile first in odd rounds, Triton first in
even ones) and its median kept; each shape ends with the best config of
each side, which is what an autotuner timing both in this harness would
keep.  GPU machine:

    python3 bench/matmul_configs.py TILEC [MxNxK ...] [--configs 0,4,7] [--rounds 3] [--csv FILE]
                                      [--data randn|halves]"""
import argparse
import csv
import os
import statistics
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tile_cubin import TileKernel, signature  # noqa: E402
from triton_bench import MATMUL_CONFIGS, Timer, matmul_call, matmul_kernel, random_halves  # noqa: E402

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "matmul", "matmul.tl")


def config_name(index):
    cfg = MATMUL_CONFIGS[index]
    kw = cfg.kwargs
    return "%d: %dx%dx%d w%d s%d" % (index, kw["BLOCK_SIZE_M"], kw["BLOCK_SIZE_N"], kw["BLOCK_SIZE_K"], cfg.num_warps,
                                     cfg.num_stages)


class Shape:
    """One shape's inputs, outputs and a launcher per side and config (tile's cubins shared between shapes)."""

    def __init__(self, tilec, shape, kernels, data="randn"):
        self.m, self.n, self.k = (int(x) for x in shape.split("x"))
        if data == "halves":  # bench.c's and triton_bench.py's inputs
            self.a, self.b = random_halves(self.m, self.k), random_halves(self.k, self.n)
        else:
            self.a = torch.randn(self.m, self.k, device="cuda", dtype=torch.float16) / 8
            self.b = torch.randn(self.k, self.n, device="cuda", dtype=torch.float16) / 8
        self.out = {side: torch.empty(self.m, self.n, device="cuda", dtype=torch.float16) for side in ("tile", "triton")}
        self.tilec, self.kernels = tilec, kernels

    def launcher(self, side, index):
        cfg = MATMUL_CONFIGS[index]
        kw = cfg.kwargs
        grid = (triton.cdiv(self.m, kw["BLOCK_SIZE_M"]) * triton.cdiv(self.n, kw["BLOCK_SIZE_N"]), )
        args = matmul_call(self.a, self.b, self.out[side])[1]
        if side == "triton":
            return lambda s: matmul_kernel[grid](*args, ACTIVATION="", num_warps=cfg.num_warps,
                                                 num_stages=cfg.num_stages, **kw)
        args = list(args)
        key = (index, signature(args))  # one cubin serves every shape with the same specialisation
        if key not in self.kernels:
            self.kernels[key] = TileKernel(self.tilec, SOURCE, args, dict(kw, ACTIVATION='""'), cfg.num_warps,
                                           kernel="matmul_kernel", num_stages=cfg.num_stages)
        tk = self.kernels[key]
        stream = torch.cuda.current_stream().cuda_stream
        return lambda s: tk.launch(grid, args, stream)

    def correct(self):
        want = self.a.float() @ self.b.float()
        return all(torch.allclose(c.float(), want, rtol=1e-2, atol=1e-2) for c in self.out.values())

    def tflops(self, ms):
        return 2 * self.m * self.n * self.k / (ms * 1e9)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tilec")
    parser.add_argument("shapes", nargs="*", default=["1024x1024x1024", "2048x2048x2048", "128x4096x4096"])
    parser.add_argument("--configs", default=",".join(str(i) for i in range(len(MATMUL_CONFIGS))))
    parser.add_argument("--rounds", type=int, default=1, help="times each figure is measured (median kept)")
    parser.add_argument("--csv", help="write rows kernel,size,impl,config,ms,tflops,gpu here")
    parser.add_argument("--data", choices=("randn", "halves"), default="randn",
                        help="inputs: randn / 8 (default), or the autotuned benchmarks' fp16 of magnitude 2^-5..2")
    args = parser.parse_args()
    timer = Timer(False)
    configs = [int(c) for c in args.configs.split(",")]
    gpu = torch.cuda.get_device_name(0)
    rows, kernels, wrong = [], {}, 0
    print("%-16s %-26s %10s %10s %7s   (median of %d round%s)" % ("shape", "config", "tile TF/s", "triton", "ratio",
                                                                  args.rounds, "s" if args.rounds > 1 else ""))
    for shape_text in args.shapes:
        shape = Shape(args.tilec, shape_text, kernels, args.data)
        best = {}
        for index in configs:
            launch = {side: shape.launcher(side, index) for side in ("tile", "triton")}
            times = {"tile": [], "triton": []}
            for r in range(args.rounds):
                for side in (("tile", "triton") if r % 2 == 0 else ("triton", "tile")):
                    times[side].append(timer.median_ms(launch[side], 1))
            ms = {side: statistics.median(t) for side, t in times.items()}
            ok = shape.correct()
            wrong += not ok
            for side in ms:
                rows.append(("matmul_configs", shape_text, side, index, ms[side], shape.tflops(ms[side]), gpu))
                if ok and ms[side] < best.get(side, (float("inf"), -1))[0]:
                    best[side] = (ms[side], index)
            spread = ""
            if args.rounds > 1:  # each round's ratio, to tell a steady gap from noise
                spread = "   rounds: " + " ".join("%.2f" % (y / x) for x, y in zip(times["tile"], times["triton"]))
            print("%-16s %-26s %10.1f %10.1f %7.2f%s%s" % (shape_text, config_name(index), shape.tflops(ms["tile"]),
                                                           shape.tflops(ms["triton"]), ms["triton"] / ms["tile"],
                                                           "" if ok else "  WRONG", spread), flush=True)
        if len(best) == 2:
            (tile_ms, tile_cfg), (triton_ms, triton_cfg) = best["tile"], best["triton"]
            print("%-16s %-26s %10.1f %10.1f %7.2f   (tile config %d, Triton config %d)" % (
                shape_text, "best of each", shape.tflops(tile_ms), shape.tflops(triton_ms), triton_ms / tile_ms,
                tile_cfg, triton_cfg), flush=True)
            for side, (ms, index) in best.items():
                rows.append(("matmul_configs_best", shape_text, side, index, ms, shape.tflops(ms), gpu))
        del shape
        torch.cuda.empty_cache()
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(("kernel", "size", "impl", "config", "ms", "tflops", "gpu"))
            w.writerows(rows)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
