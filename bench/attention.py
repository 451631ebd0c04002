"""Fused attention: tile's examples/attention kernels against torch SDPA (the flash and cuDNN backends) and,
when its path is given, Triton's tutorial 06 as published, forward and backward, in one process.

tile's four kernels (attention.tl: attn_fwd; attn_bwd_preprocess, attn_bwd_dkdv, attn_bwd_dq) are compiled
by tilec to cubins and launched through the CUDA driver on torch's tensors (tile_cubin.py); every side is
timed in turns in one loop by triton_bench.py's Timer (cold L2, CUDA events, medians).  TFLOP/s as tutorial
06 counts them: forward 4 B H N^2 D, halved when causal; backward 2.5 times the forward.  Each side's
output is compared with torch's math backend in fp32 (a sanity check: examples/attention checks tile's
kernels against a float64 reference).

    python3 bench/attention.py --tilec build/tilec [--triton-tutorial PATH/06-fused-attention.py]
        [--triton-autotune] [--tile-tutorial] [--fp8] [--shapes 64:4096:0,128:16384:1,...] [--batch 4]
        [--heads 32] [--csv FILE]

The tutorial's path may also come from $TRITON_TUTORIAL_06.  It is imported with PYTEST_VERSION set, so it
runs its one test config (BLOCK_M 128, BLOCK_N 64, 2 stages, 4 warps) rather than tuning 36 configs per
shape; --triton-autotune tunes as published (minutes on the first run, then Triton's cache).  Prints one
CSV row per shape and pass: TFLOP/s of each side and tile's ratios.  --fp8 adds a pass "fwd-fp8": the
forward on e5m2 copies of the inputs (V stored [B, H, D, N]), tile's against the tutorial's fp8 path (and
tile compiling it, with --tile-tutorial).  About three minutes on an H100.
"""
import argparse
import csv
import itertools
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from tile_cubin import TensorDesc, TileKernel  # noqa: E402
from triton_bench import Timer, load_source  # noqa: E402

SOURCE = os.environ.get("TILE_ATTENTION_SOURCE",  # another copy of the example, for comparisons
                        os.path.join(os.path.dirname(here), "examples", "attention", "attention.tl"))
# (head dim, N_CTX, causal): the table, both masks at every length
SHAPES = [(d, n, c) for d in (64, 128) for n in (1024, 4096, 16384) for c in (0, 1)]


def blocks(d, causal, fp8=False):
    """examples/attention/main.c's GPU blocks: (BLOCK_M, BLOCK_N, warps, stages) per kernel."""
    fwd64 = (64, 64, 4, 3) if fp8 else (64, 64, 4, 2) if causal else (128, 64, 8, 3)
    return {"fwd": fwd64 if d == 64 else (128, 128, 8, 2),
            "dkdv": (128, 128, 8, 3) if d == 64 else (64, 128, 8, 2),
            "dq": (64, 64, 4, 3) if d == 64 else (128, 64, 8, 3), "pre": (64, 0, 4, 1)}


class Tile:
    """tile's forward and backward for one head dim, mask and input set; with vt (V stored [B, H, D, N], as
    fp8 V is), the forward alone."""

    def __init__(self, tilec, q, k, v, do, causal, sm_scale, vt=None):
        b, h, n, d = q.shape
        self.q, self.k, self.v, self.do, self.n, self.bh = q, k, v, do, n, b * h
        self.o = torch.empty_like(q)
        self.m = torch.empty(b * h, n, device="cuda", dtype=torch.float32)
        tail = [q.stride(0), q.stride(1), q.stride(2), q.stride(3), h, n]
        self.args = {"fwd": [q, k, v if vt is None else vt, sm_scale, self.m, self.o, b, h, n]}
        if vt is None:
            self.delta = torch.empty_like(self.m)
            self.dq, self.dk, self.dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            self.args.update({
                "pre": [self.o, do, self.delta] + tail,
                "dkdv": [q, k, v, sm_scale, do, self.dk, self.dv, self.m, self.delta, b, h, n],
                "dq": [q, k, v, sm_scale, do, self.dq, self.m, self.delta, b, h, n],
            })
        names = {"fwd": "attn_fwd", "pre": "attn_bwd_preprocess", "dkdv": "attn_bwd_dkdv", "dq": "attn_bwd_dq"}
        self.kernels, self.grids = {}, {}
        for part, (bm, bn, warps, stages) in blocks(d, causal, fp8=vt is not None).items():
            if part not in self.args:
                continue
            defines = {"HEAD_DIM": d, "BLOCK_M": bm}
            if bn:
                defines.update(BLOCK_N=bn, CAUSAL=bool(causal))
            self.kernels[part] = TileKernel(tilec, SOURCE, self.args[part], defines, warps, kernel=names[part],
                                            num_stages=stages)
            rows = bn if part == "dkdv" else bm
            self.grids[part] = ((n + rows - 1) // rows, b * h)
        self.registers = {p: (kk.meta["registers"], kk.meta["spills"]) for p, kk in self.kernels.items()}

    def run(self, part):
        self.kernels[part].launch(self.grids[part], self.args[part], torch.cuda.current_stream().cuda_stream)

    def forward(self):
        self.run("fwd")
        return self.o

    def backward(self):
        for part in ("pre", "dkdv", "dq"):
            self.run(part)
        return self.dq, self.dk, self.dv


class TileTutorial:
    """Triton's tutorial 06 kernels as published, compiled by tilec (tile's side of the issue's "tutorial 06
    compiled by tile" bound): _attn_fwd with warp_specialize=False, given host tensor descriptors as the
    tutorial gives them then on Hopper ("desc"), or its pointer parameters (the descriptors made in the
    kernel, as the tutorial does with warp_specialize: "ptr"), tuned over both and the tutorial's own block
    configs by timing each once (Triton autotunes the same list); the backward as the tutorial launches it
    (one config)."""

    FWD_CONFIGS = [(128, 64, 4, 2), (128, 64, 8, 2), (128, 128, 8, 2), (128, 64, 4, 3), (64, 64, 4, 3),
                   (128, 32, 4, 3), (64, 32, 4, 4)]

    def __init__(self, tilec, path, q, k, v, do, causal, sm_scale, fp8=False):
        z, h, n, d = q.shape
        self.q, self.k, self.v, self.do, self.sm_scale = q, k, v, do, sm_scale
        self.o = torch.empty_like(q)
        self.m = torch.empty(z, h, n, device="cuda", dtype=torch.float32)
        self.delta = torch.empty_like(self.m)
        self.dq, self.dk, self.dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        self.stream = torch.cuda.current_stream().cuda_stream
        consts = {"HEAD_DIM": d, "FP8_OUTPUT": fp8, "STAGE": 3 if causal else 1, "warp_specialize": False,
                  "IS_HOPPER": True}
        best = None
        # fp8: pointers only (the tutorial's fp8 V descriptor, [D, Z*H*N] with row stride N, reads past its
        # shape for every head but the first: the bench's note on Triton's fp8 side)
        forms = ("ptr",) if fp8 else ("desc", "ptr")
        for (bm, bn, warps, stages), form in itertools.product(self.FWD_CONFIGS, forms):
            if bn > d or n % bm:
                continue
            args = self.fwd_arguments(form, bm, bn)
            try:
                kernel = TileKernel(tilec, path, args, dict(consts, BLOCK_M=bm, BLOCK_N=bn), warps,
                                    kernel="_attn_fwd", num_stages=stages)
            except Exception:  # a config tilec refuses (shared memory) is left out, as Triton prunes
                continue
            grid = (n // bm, z * h)
            ms = self.time_once(lambda: kernel.launch(grid, args, self.stream))
            if best is None or ms < best[0]:
                best = (ms, kernel, grid, args, "%dx%d w%d s%d %s" % (bm, bn, warps, stages, form))
        _, self.fwd_kernel, self.fwd_grid, self.fwd_args, self.fwd_config = best
        self.registers = {"fwd": (self.fwd_kernel.meta["registers"], self.fwd_kernel.meta["spills"])}
        if fp8:
            return  # the tutorial's backward is fp16 only
        self.pre_args = [self.o, do, self.delta, z, h, n]
        self.pre = TileKernel(tilec, path, self.pre_args, {"BLOCK_M": 128, "HEAD_DIM": d}, 4,
                              kernel="_attn_bwd_preprocess")
        self.arg_k = torch.empty_like(k)
        self.bwd_args = [q, self.arg_k, v, sm_scale, do, self.dq, self.dk, self.dv, self.m, self.delta,
                         q.stride(0), q.stride(1), q.stride(2), q.stride(3), h, n]
        self.bwd = TileKernel(tilec, path, self.bwd_args, {"BLOCK_M1": 32, "BLOCK_N1": 128, "BLOCK_M2": 128,
                              "BLOCK_N2": 32, "BLK_SLICE_FACTOR": 2, "HEAD_DIM": d, "CAUSAL": bool(causal)}, 4,
                              kernel="_attn_bwd", num_stages=5)
        self.pre_grid, self.bwd_grid = (n // 128, z * h), (n // 128, 1, z * h)
        self.registers["bwd"] = (self.bwd.meta["registers"], self.bwd.meta["spills"])

    def fwd_arguments(self, form, bm, bn):
        """_attn_fwd's arguments: the tensors themselves, or host descriptors of their [Z*H*N, D] views with
        the block shapes the tutorial's pre-hook gives them."""
        q, k, v, o = self.q, self.k, self.v, self.o
        z, h, n, d = q.shape
        if form == "ptr":
            return [self.sm_scale, self.m, z, h, q, k, v, o, n]
        rows = z * h * n
        return [self.sm_scale, self.m, z, h] + [TensorDesc(t, [rows, d], [d, 1], [b, d])
                                                for t, b in ((q, bm), (k, bn), (v, bn), (o, bm))] + [n]

    @staticmethod
    def time_once(launch):
        launch()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(3):
            launch()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end)

    def forward(self):
        self.fwd_kernel.launch(self.fwd_grid, self.fwd_args, self.stream)
        return self.o

    def backward(self):
        torch.mul(self.k, self.sm_scale * 1.4426950408889634, out=self.arg_k)  # the tutorial's arg_k
        self.pre.launch(self.pre_grid, self.pre_args, self.stream)
        self.bwd.launch(self.bwd_grid, self.bwd_args, self.stream)
        return self.dq, self.dk, self.dv


def sdpa(backend, q, k, v, causal, sm_scale):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), scale=sm_scale)


def triton_module(path, autotune):
    if not autotune:
        os.environ["PYTEST_VERSION"] = "tile-bench"  # the tutorial's single test config
    return load_source("fused_attention_tutorial", path)


def triton_call(module, q, k, v, causal, sm_scale):
    return module.attention(q, k, v, bool(causal), sm_scale)  # the tutorial's defaults for the rest


class ForwardOnly:
    """A contender timed on its forward alone (the fp8 ones)."""

    def __init__(self, forward):
        self.forward = forward


class Autograd:
    """A torch-side contender: forward builds the graph once; backward reruns autograd.grad on it."""

    def __init__(self, forward, q, k, v, do):
        self.forward_fn, self.inputs, self.do = forward, (q, k, v), do
        self.out = forward()

    def forward(self):
        return self.forward_fn()

    def backward(self):
        return torch.autograd.grad(self.out, self.inputs, self.do, retain_graph=True)


def mismatch(got, want, atol):
    """The largest |got - want| if past atol (NaN counts), else None."""
    err = (got.float() - want).abs().max().item()
    return None if err <= atol else err


def fp8_sides(args, module, q, k, v, causal, sm_scale):
    """The fp8 forward's contenders, on e5m2 copies of q, k, v as the tutorial's benchmark makes them (V
    stored [B, H, D, N]; the tutorial is given its [B, H, N, D] view)."""
    q8, k8 = (t.detach().to(torch.float8_e5m2) for t in (q, k))
    vt8 = v.detach().permute(0, 1, 3, 2).contiguous().to(torch.float8_e5m2)
    sides = {"tile": Tile(args.tilec, q8, k8, None, None, causal, sm_scale, vt=vt8)}
    if args.tile_tutorial and args.triton_tutorial:
        try:
            sides["tile06"] = TileTutorial(args.tilec, args.triton_tutorial, q8, k8, vt8, None, causal, sm_scale,
                                           fp8=True)
        except Exception as e:
            print("# tile06 fp8 failed at N=%d causal=%d: %s" % (q.shape[2], causal, str(e).splitlines()[0]),
                  file=sys.stderr)
    if module:
        try:
            v8 = vt8.permute(0, 1, 3, 2)
            triton_call(module, q8, k8, v8, causal, sm_scale)
            sides["triton"] = ForwardOnly(lambda: triton_call(module, q8, k8, v8, causal, sm_scale))
        except Exception as e:
            print("# triton fp8 failed at N=%d causal=%d: %s" % (q.shape[2], causal, str(e).splitlines()[0]),
                  file=sys.stderr)
    return sides


def time_pass(timer, sides, part, flops):
    """TFLOP/s of each side's forward or backward, timed in turns in one loop."""
    names = list(sides)
    launches = [(lambda s, side=sides[nm]: side.forward() if part.startswith("fwd") else side.backward())
                for nm in names]
    ms = timer.interleaved_ms(launches)
    return {nm: flops / (t * 1e-3) * 1e-12 for nm, t in zip(names, ms)}


def make_row(d, n, causal, part, tflops, sides, notes):
    row = {"head_dim": d, "n_ctx": n, "causal": causal, "pass": part}
    for nm in ("tile", "flash", "cudnn", "triton", "tile06"):
        row[nm + "_tflops"] = "%.1f" % tflops[nm] if nm in tflops else ""
    for nm in ("flash", "cudnn", "triton"):
        row["tile/" + nm] = "%.3f" % (tflops["tile"] / tflops[nm]) if nm in tflops else ""
    both = "tile06" in tflops and "triton" in tflops
    row["tile06/triton"] = "%.3f" % (tflops["tile06"] / tflops["triton"]) if both else ""
    fwd = part.startswith("fwd")
    if "tile06" in sides:
        t06 = sides["tile06"]
        row["tile06_config"] = t06.fwd_config if fwd else "32/128/128/32 w4 s5"
        row["tile06_config"] += " %d/%d" % t06.registers["fwd" if fwd else "bwd"]
    row["tile_registers"] = " ".join("%s:%d/%d" % (p, r, s) for p, (r, s) in sides["tile"].registers.items()
                                     if (p == "fwd") == fwd)
    row["notes"] = "; ".join(notes)
    return row


def one_shape(args, timer, module, d, n, causal):
    torch.manual_seed(20)
    shape = (args.batch, args.heads, n, d)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16).requires_grad_() for _ in range(3))
    do = torch.randn(shape, device="cuda", dtype=torch.float16)
    sm_scale = 1 / math.sqrt(d)
    tile = Tile(args.tilec, q.detach(), k.detach(), v.detach(), do, causal, sm_scale)
    sides = {"tile": tile}
    for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        try:
            sides[name] = Autograd(lambda b=backend: sdpa(b, q, k, v, causal, sm_scale), q, k, v, do)
        except RuntimeError as e:
            print("# %s unavailable at D=%d N=%d: %s" % (name, d, n, str(e).splitlines()[0]), file=sys.stderr)
    if args.tile_tutorial and args.triton_tutorial:
        try:
            sides["tile06"] = TileTutorial(args.tilec, args.triton_tutorial, q.detach(), k.detach(), v.detach(), do,
                                           causal, sm_scale)
        except Exception as e:  # tilec failing on the tutorial is a result to report, not a reason to stop
            print("# tile06 failed at D=%d N=%d causal=%d: %s" % (d, n, causal, str(e).splitlines()[0]), file=sys.stderr)
    if module:
        try:
            sides["triton"] = Autograd(lambda: triton_call(module, q, k, v, causal, sm_scale), q, k, v, do)
        except Exception as e:  # Triton's own compiler can fail on a shape: that side is left out
            print("# triton failed at D=%d N=%d causal=%d: %s" % (d, n, causal, str(e).splitlines()[0]), file=sys.stderr)
    # a sanity check against torch's math backend in fp32, on one head (the math backend is O(N^2) memory)
    q1, k1, v1 = (t.detach()[:1, :1].float().requires_grad_() for t in (q, k, v))
    want_o = sdpa(SDPBackend.MATH, q1, k1, v1, causal, sm_scale)
    want_grads = torch.autograd.grad(want_o, (q1, k1, v1), do[:1, :1].float())
    notes = []
    for name, side in sides.items():
        bad = mismatch(side.forward()[:1, :1], want_o, 2e-2)
        grads = side.backward()
        bad_grads = [mismatch(g[:1, :1], w, 5e-2) for g, w in zip(grads, want_grads)]
        if bad is not None or any(b is not None for b in bad_grads):
            notes.append("%s differs from torch's math backend (O %s, dQ/dK/dV %s)" % (name, bad, bad_grads))
    flops = 4.0 * args.batch * args.heads * n * n * d * (0.5 if causal else 1)
    rows = [make_row(d, n, causal, part, time_pass(timer, sides, part, flops * scale), sides, notes)
            for part, scale in (("fwd", 1.0), ("bwd", 2.5))]
    del sides, tile
    if args.fp8:
        # fp8 rounds q, k and v (e5m2: 2 mantissa bits), p and O: against the fp16 inputs' result, a loose
        # check (outputs are about 0.1 here), on the first head and the last
        sides = fp8_sides(args, module, q, k, v, causal, sm_scale)
        last = [t.detach()[-1:, -1:].float() for t in (q, k, v)]
        want_last = sdpa(SDPBackend.MATH, *last, causal, sm_scale)
        notes = ["%s fp8 differs from torch's math backend by %.3g (head %s)" % (nm, err, at)
                 for nm, side in sides.items() for out in [side.forward()]
                 for at, err in (("first", mismatch(out[:1, :1], want_o, 0.05)),
                                 ("last", mismatch(out[-1:, -1:], want_last, 0.05))) if err is not None]
        rows.append(make_row(d, n, causal, "fwd-fp8", time_pass(timer, sides, "fwd", flops), sides, notes))
        del sides
    torch.cuda.empty_cache()
    return rows


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        d, n, c = (int(x) for x in item.split(":"))
        shapes.append((d, n, c))
    return shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilec", required=True)
    ap.add_argument("--triton-tutorial", default=os.environ.get("TRITON_TUTORIAL_06"))
    ap.add_argument("--triton-autotune", action="store_true")
    ap.add_argument("--tile-tutorial", action="store_true",
                    help="also time the tutorial's kernels compiled by tilec (needs --triton-tutorial)")
    ap.add_argument("--shapes", type=parse_shapes, default=SHAPES, help="HEAD_DIM:N_CTX:CAUSAL,...")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--reps", type=int, default=5, help="timed rounds at least (each side once per round)")
    ap.add_argument("--fp8", action="store_true",
                    help="also the forward in fp8 (e5m2, as the tutorial's benchmark), tile against the tutorial")
    ap.add_argument("--csv")
    args = ap.parse_args()
    module = triton_module(args.triton_tutorial, args.triton_autotune) if args.triton_tutorial else None
    timer = Timer(False)
    timer.min_reps, timer.max_reps = args.reps, max(args.reps, 40)
    fields = ["head_dim", "n_ctx", "causal", "pass", "tile_tflops", "flash_tflops", "cudnn_tflops",
              "triton_tflops", "tile/flash", "tile/cudnn", "tile/triton", "tile_registers", "tile06_tflops",
              "tile06/triton", "tile06_config", "notes"]
    out = open(args.csv, "w", newline="") if args.csv else None
    writers = [csv.DictWriter(sys.stdout, fields)] + ([csv.DictWriter(out, fields)] if out else [])
    print("# %s, batch %d, %d heads, fp16; Triton tutorial: %s" % (torch.cuda.get_device_name(), args.batch,
          args.heads, (args.triton_tutorial + (" (autotuned)" if args.triton_autotune else " (one config)"))
          if module else "not given"))
    for w in writers:
        w.writeheader()
    start = time.time()
    for d, n, causal in args.shapes:
        for row in one_shape(args, timer, module, d, n, causal):
            for w in writers:
                w.writerow(row)
        sys.stdout.flush()
        if out:
            out.flush()  # a run cut short keeps the shapes it finished
    print("# %.0f s" % (time.time() - start))
    if out:
        out.close()


if __name__ == "__main__":
    main()
