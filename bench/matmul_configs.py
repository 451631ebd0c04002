"""tile and Triton on the same matmul config, one config at a time: each of
the tutorial's autotune configs at a few shapes, both timed by
triton_bench.py's Timer (tile's kernel: tilec's cubin, bench/tile_cubin.py),
to tell a slower kernel from a different autotuner choice.  The two sides'
launches take turns in one timing loop (Timer.interleaved_ms), so both meet
the same clocks and power; with --rounds N every figure is measured N times
and its median kept.  tile's side is each config as tilec compiles it and,
with --refill (what tile's autotuner does), also with the other refill
schedule (tilec --refill early/late: one more buffer refilled early, or one
fewer refilled late), in the same loop.  Each shape ends with each side's
two fastest variants (what an autotuner timing both in this harness would
choose from) timed again, in turns with cuBLAS (torch.matmul), the faster
of each side kept.  GPU machine:

    python3 bench/matmul_configs.py TILEC [MxNxK ...] [--configs 0,4,7] [--rounds 3] [--csv FILE]
                                      [--data randn|halves] [--refill]"""
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
        self.out = {"cublas": torch.empty(self.m, self.n, device="cuda", dtype=torch.float16)}  # launcher adds more
        self.tilec, self.kernels = tilec, kernels

    def launcher(self, side, index, refill=None, tma=None):
        if side == "cublas":
            return lambda s: torch.matmul(self.a, self.b, out=self.out["cublas"])
        cfg = MATMUL_CONFIGS[index]
        kw = cfg.kwargs
        grid = (triton.cdiv(self.m, kw["BLOCK_SIZE_M"]) * triton.cdiv(self.n, kw["BLOCK_SIZE_N"]), )
        out = output_name(side, index, refill, tma)  # each variant writes its own output
        if out not in self.out:
            self.out[out] = torch.full((self.m, self.n), float("nan"), device="cuda", dtype=torch.float16)
        args = matmul_call(self.a, self.b, self.out[out])[1]
        if side == "triton":
            return lambda s: matmul_kernel[grid](*args, ACTIVATION="", num_warps=cfg.num_warps,
                                                 num_stages=cfg.num_stages, **kw)
        tk = self.tile_kernel(index, list(args), refill, tma)
        stream = torch.cuda.current_stream().cuda_stream
        return lambda s: tk.launch(grid, args, stream)

    def tile_kernel(self, index, args, refill=None, tma=None):
        cfg = MATMUL_CONFIGS[index]
        key = (index, signature(args), refill, tma)  # one cubin serves every shape with the same specialisation
        if key not in self.kernels:
            self.kernels[key] = TileKernel(self.tilec, SOURCE, args, dict(cfg.kwargs, ACTIVATION='""'), cfg.num_warps,
                                           kernel="matmul_kernel", num_stages=cfg.num_stages, refill=refill, tma=tma)
        return self.kernels[key]

    def tile_meta(self, index, refill=None):
        """The metadata of tilec's code for this config (and refill schedule) at this shape."""
        return self.tile_kernel(index, list(matmul_call(self.a, self.b, self.out["cublas"])[1]), refill).meta

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


def output_name(side, index, refill=None, tma=None):
    return side if side == "cublas" else "%s/%d/%s%s" % (side, index, refill or "", "/no-tma" if tma else "")


def other_refill(shape, index):
    """The refill schedule tilec did not pick for this config; None where its loops have no choice or
    the other schedule comes out the same (the extra buffer does not fit), as tile's autotuner skips it."""
    own = shape.tile_meta(index).get("refill")
    other = {"early": "late", "late": "early"}.get(own)
    return other if other and shape.tile_meta(index, other).get("refill") != own else None


def uses_tma(shape, index):
    """Whether tilec's code for this config brings its loads by TMA (its metadata lists tensor maps): then
    tile's autotuner also times it without, and so does --tma here."""
    return "tensor_maps" in shape.tile_meta(index)


def fastest(found, count):
    """The `count` fastest of (ms, index, refill, tma) entries."""
    return sorted(found, key=lambda f: f[0])[:count]


def variant_name(index, refill, tma=None):
    return str(index) + ("/" + refill if refill else "") + ("/no-tma" if tma else "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tilec")
    parser.add_argument("shapes", nargs="*", default=["1024x1024x1024", "2048x2048x2048", "128x4096x4096"])
    parser.add_argument("--configs", default=",".join(str(i) for i in range(len(MATMUL_CONFIGS))))
    parser.add_argument("--rounds", type=int, default=1, help="times each figure is measured (median kept)")
    parser.add_argument("--csv", help="write rows kernel,size,impl,config,ms,tflops,gpu here")
    parser.add_argument("--data", choices=("randn", "halves"), default="randn",
                        help="inputs: randn / 8 (default), or the autotuned benchmarks' fp16 of magnitude 2^-5..2")
    parser.add_argument("--refill", action="store_true",
                        help="tile's side also with the other refill schedule of each config, as its autotuner tries")
    parser.add_argument("--tma", action="store_true",
                        help="tile's side also without TMA where it has TMA copies (--tma off), as its autotuner tries")
    args = parser.parse_args()
    timer = Timer(False)
    configs = [int(c) for c in args.configs.split(",")]
    gpu = torch.cuda.get_device_name(0)
    rows, kernels, wrong = [], {}, 0
    print("%-16s %-26s %10s %10s %7s%s%s   (median of %d round%s)" % (
        "shape", "config", "tile TF/s", "triton", "ratio", "   other refill: TF/s, /triton" if args.refill else "",
        "   no TMA: TF/s (other refill)" if args.tma else "", args.rounds, "s" if args.rounds > 1 else ""))
    for shape_text in args.shapes:
        shape = Shape(args.tilec, shape_text, kernels, args.data)
        found = {"tile": [], "triton": []}  # (ms, index, refill, tma) of every correct variant
        for index in configs:
            other = other_refill(shape, index) if args.refill else None
            refills = [None] + ([other] if other else [])
            no_tma = args.tma and uses_tma(shape, index)
            variants = [("tile", None, None), ("triton", None, None)] + [("tile", r, None) for r in refills[1:]]
            variants += [("tile", r, "off") for r in refills] if no_tma else []
            shape.poison()
            ms, ratios = measure(timer, [shape.launcher(side, index, r, t) for side, r, t in variants], args.rounds)
            ok = shape.correct([output_name(side, index, r, t) for side, r, t in variants])
            wrong += not ok
            for (side, r, t), m in zip(variants, ms):
                rows.append(("matmul_configs", shape_text, side, variant_name(index, r, t), m, shape.tflops(m), gpu))
                if ok:
                    found[side].append((m, index, r, t))
            extra = ""
            if args.refill:
                extra += "   %-5s %6.1f %5.2f" % (other, shape.tflops(ms[2]), ms[1] / ms[2]) if other else "   %-5s" % "-"
            if args.tma:
                rest = ms[2 + len(refills) - 1:] if no_tma else []
                extra += "   " + (" ".join("%6.1f" % shape.tflops(m) for m in rest) if rest else "     -")
            print("%-16s %-26s %10.1f %10.1f %7.2f%s%s" % (
                shape_text, config_name(index), shape.tflops(ms[0]), shape.tflops(ms[1]), ms[1] / ms[0],
                "" if ok else "  WRONG", extra) + spread(ratios[1]), flush=True)
        if found["tile"] and found["triton"]:
            # each side's two fastest again (as many for both), in turns with cuBLAS: a choice made on one
            # loop's noise is checked against the runner-up in the same loop, alike for both sides
            count = min(2, len(found["tile"]), len(found["triton"]))
            finalists = [("tile", f[1:]) for f in fastest(found["tile"], count)]
            finalists += [("triton", f[1:]) for f in fastest(found["triton"], count)] + [("cublas", (-1, None, None))]
            shape.poison()
            ms, ratios = measure(timer, [shape.launcher(side, *v) for side, v in finalists], args.rounds)
            wrong += not shape.correct([output_name(side, *v) for side, v in finalists])
            best = {}
            for i, (side, v) in enumerate(finalists):
                if ms[i] < best.get(side, (float("inf"), ))[0]:
                    best[side] = (ms[i], v, i)
            t, c, b = best["tile"], best["triton"], best["cublas"]
            rounds = [r_t / r_c for r_t, r_c in zip(ratios[t[2]], ratios[c[2]])]  # tile / Triton time per round
            print("%-16s %-26s %10.1f %10.1f %7.2f%s   (tile config %s, Triton config %d; cuBLAS %.1f, tile %.2fx)" % (
                shape_text, "best of each", shape.tflops(t[0]), shape.tflops(c[0]), c[0] / t[0],
                spread([1 / r for r in rounds]), variant_name(*t[1]), c[1][0], shape.tflops(b[0]), b[0] / t[0]),
                flush=True)
            for side in ("tile", "triton", "cublas"):
                rows.append(("matmul_configs_best", shape_text, side, variant_name(*best[side][1]), best[side][0],
                             shape.tflops(best[side][0]), gpu))
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
