"""tile and Triton on the same matmul config, one config at a time: each of
the tutorial's autotune configs at a few shapes, both timed by
triton_bench.py's Timer (tile's kernel: tilec's cubin, bench/tile_cubin.py),
to tell a slower kernel from a different autotuner choice.  The two sides'
launches take turns in one timing loop (Timer.interleaved_ms), so both meet
the same clocks and power; with --rounds N every figure is measured N times
and its median kept.  Each shape ends with the best config of each side
(what an autotuner timing both in this harness would keep) timed again, in
turns with cuBLAS (torch.matmul).  GPU machine:

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
        self.out = {side: torch.empty(self.m, self.n, device="cuda", dtype=torch.float16)
                    for side in ("tile", "triton", "cublas")}
        self.tilec, self.kernels = tilec, kernels

    def launcher(self, side, index):
        if side == "cublas":
            return lambda s: torch.matmul(self.a, self.b, out=self.out["cublas"])
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

    def poison(self):
        for c in self.out.values():
            c.fill_(float("nan"))

    def correct(self, sides):
        want = self.a.float() @ self.b.float()
        return all(torch.allclose(self.out[side].float(), want, rtol=1e-2, atol=1e-2) for side in sides)

    def tflops(self, ms):
        return 2 * self.m * self.n * self.k / (ms * 1e9)


def measure(timer, launches, rounds):
    """Each launch's median time over `rounds` interleaved measurements, and each round's ratio of the
    first launch's time to every launch's (ratios[i][r]: launch i against launch 0 in round r)."""
    times = [timer.interleaved_ms(launches) for _ in range(rounds)]
    ms = [statistics.median(t[i] for t in times) for i in range(len(launches))]
    return ms, [[t[i] / t[0] for t in times] for i in range(len(launches))]


def spread(ratios):
    """Each round's ratio, to tell a steady gap from noise."""
    return "   rounds: " + " ".join("%.2f" % r for r in ratios) if len(ratios) > 1 else ""


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
            sides = ("tile", "triton")
            shape.poison()
            ms, ratios = measure(timer, [shape.launcher(side, index) for side in sides], args.rounds)
            ok = shape.correct(sides)
            wrong += not ok
            for side, t in zip(sides, ms):
                rows.append(("matmul_configs", shape_text, side, index, t, shape.tflops(t), gpu))
                if ok and t < best.get(side, (float("inf"), -1))[0]:
                    best[side] = (t, index)
            print("%-16s %-26s %10.1f %10.1f %7.2f%s%s" % (shape_text, config_name(index), shape.tflops(ms[0]),
                                                           shape.tflops(ms[1]), ms[1] / ms[0], "" if ok else "  WRONG",
                                                           spread(ratios[1])), flush=True)
        if len(best) == 2:  # the two choices again, in turns with cuBLAS
            sides = ("tile", "triton", "cublas")
            shape.poison()
            choice = {"tile": best["tile"][1], "triton": best["triton"][1], "cublas": -1}
            ms, ratios = measure(timer, [shape.launcher(side, choice[side]) for side in sides], args.rounds)
            wrong += not shape.correct(sides)
            print("%-16s %-26s %10.1f %10.1f %7.2f%s   (tile config %d, Triton config %d; cuBLAS %.1f, tile %.2fx)" % (
                shape_text, "best of each", shape.tflops(ms[0]), shape.tflops(ms[1]), ms[1] / ms[0], spread(ratios[1]),
                choice["tile"], choice["triton"], shape.tflops(ms[2]), ms[2] / ms[0]), flush=True)
            for side, t in zip(sides, ms):
                rows.append(("matmul_configs_best", shape_text, side, choice[side], t, shape.tflops(t), gpu))
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
