#!/usr/bin/env python3
"""Triton's tutorials' kernels on the GPU against tile's CPU interpreter (issue #19).

Triton's tutorials are Triton's code and stay out of the repository: copy each `python/tutorials/NN-*.py`
of the Triton checkout you follow to `DIR/NN-*.tl`, unmodified (docs/triton_tutorials.md names the
commit the sweep reads). For every run below, fresh random inputs (NumPy, the seed printed) go through
`tilec run --device cpu` and `tilec run --device gpu` with the same arguments, each output poisoned
before the run (NaN, or 0xA5 bytes); every output must match, NaN for NaN, within the run's tolerance.
The runs are this file's own: the tutorials' launchers' arguments (signatures, grids as their grid
lambdas, constexprs, num_warps and num_stages where a launcher gives them) at small irregular sizes.

    python3 tests/gpu/tutorials.py --tilec build/tilec --tutorials DIR [--only REGEX] [--devices cpu,gpu]

`--devices cpu` alone runs the interpreter's half (a machine without a GPU). Exit status 1 when a run
fails or a file is missing.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

# One run: the tutorial file, the kernel, tilec run's options, the buffers and the arguments in order.
#   buffers  name -> (dtype, shape, how): how is ("uniform", lo, hi), ("int", lo, hi), ("values", list),
#            ("out",) or ("zeros",); dtype a NumPy name, or "fp8e4nv"/"fp8e5" (random codes of
#            magnitude at most 2)
#   args     each a buffer name, ("ptrs", names) (a table of those buffers' addresses), or a number
#   tol      (rtol, atol) for the float outputs; integers and NaN positions must be equal


def run(name, file, kernel, grid, args, buffers, defines=(), signature=None, config=None, tol=(0, 0), warps=None,
        stages=None):
    return dict(name=name, file=file, kernel=kernel, grid=grid, args=args, buffers=buffers, defines=list(defines),
                signature=signature, config=config, tol=tol, warps=warps, stages=stages)


def matmul_args(a, b, c, m, n, k, b_rows_n=False):
    """A [M, K] times B ([K, N], or [N, K] read transposed) into C [M, N], with their strides."""
    b_strides = [1, k] if b_rows_n else [n, 1]
    return [a, b, c, m, n, k, k, 1, *b_strides, n, 1]


def desc(buffer, rows, cols):
    """A tensordesc parameter's arguments: base, shape, strides (row-major, last 1)."""
    return [buffer, rows, cols, cols, 1]


F16 = "float16"
M3, N3, K3 = 300, 200, 144  # matmul sizes: no dimension a multiple of the blocks (K of 16: ':16', TMA's rows)
MM_GRID = "cdiv(%d, BLOCK_SIZE_M) * cdiv(%d, BLOCK_SIZE_N)" % (M3, N3)
MM_PERSISTENT_GRID = "min(NUM_SMS, %s)" % MM_GRID
MM_SIG = "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32:16,i32:16,i32:1,i32,i32:1,i32,i32:1"
MM_BUFFERS = {"a": (F16, (M3, K3), ("uniform", -1, 1)), "b": (F16, (K3, N3), ("uniform", -1, 1)),
              "c": (F16, (M3, N3), ("out",))}
MM_T_BUFFERS = dict(MM_BUFFERS, b=(F16, (N3, K3), ("uniform", -1, 1)))
MM_TOL = (1e-2, 1e-2)  # fp16 results of fp32 sums in another order

Z, H, NQ = 1, 2, 256  # attention: batch, heads, tokens (the backward needs N_CTX % 128 == 0)
NF = 384              # the forward's tokens (the tutorial stores its row statistics unmasked: N_CTX % BLOCK_M == 0)
ATT_DESC = "tensordesc<fp16[128, 64]>,tensordesc<fp16[64, 64]>,tensordesc<fp16[64, 64]>,tensordesc<fp16[128, 64]>"
ATT_FWD_DEFINES = ["HEAD_DIM=64", "BLOCK_M=128", "BLOCK_N=64", "FP8_OUTPUT=False", "warp_specialize=False",
                   "IS_HOPPER=True"]


def attention_forward(stage, pointers):
    rows = Z * H * NF
    qkvo = {x: (F16, (rows, 64), ("out",) if x == "o" else ("uniform", -1, 1)) for x in "qkvo"}
    buffers = dict(qkvo, m=("float32", (rows,), ("out",)))
    if pointers:
        descs, sig = ["q", "k", "v", "o"], "*fp16:16,*fp16:16,*fp16:16,*fp16:16"
    else:
        descs, sig = desc("q", rows, 64) + desc("k", rows, 64) + desc("v", rows, 64) + desc("o", rows, 64), ATT_DESC
    return run("06 _attn_fwd STAGE=%d %s" % (stage, "pointers" if pointers else "descriptors"),
               "06-fused-attention.tl", "_attn_fwd", "cdiv(%d, BLOCK_M),%d" % (NF, Z * H),
               [0.125, "m", Z, H, *descs, NF], buffers, ATT_FWD_DEFINES + ["STAGE=%d" % stage],
               signature="fp32,*fp32:16,i32,i32,%s,i32" % sig, tol=(2e-2, 2e-2))


def attention_forward_fp8():
    """FP8_OUTPUT: q, k, v and o in float8e5, v read through a [HEAD_DIM, tokens] descriptor (the tutorial's
    transposed V for Hopper's fp8 dot)."""
    rows = Z * H * NF
    buffers = {x: ("fp8e5", (rows, 64), ("uniform", -1, 1)) for x in "qk"}
    buffers.update(v=("fp8e5", (64, rows), ("uniform", -1, 1)), o=("fp8e5", (rows, 64), ("out",)),
                   m=("float32", (rows,), ("out",)))
    sig = ATT_DESC.replace("fp16", "fp8e5")
    descs = desc("q", rows, 64) + desc("k", rows, 64) + desc("v", 64, rows) + desc("o", rows, 64)
    return run("06 _attn_fwd STAGE=3 fp8", "06-fused-attention.tl", "_attn_fwd", "cdiv(%d, BLOCK_M),%d" % (NF, Z * H),
               [0.125, "m", Z, H, *descs, NF], buffers,
               [d for d in ATT_FWD_DEFINES if not d.startswith("FP8")] + ["FP8_OUTPUT=True", "STAGE=3"],
               signature="fp32,*fp32:16,i32,i32,%s,i32" % sig, tol=(0.26, 2e-2))


def attention_backward(causal):
    shape = (Z, H, NQ, 64)
    tensors = {x: (F16, shape, ("uniform", -1, 1)) for x in ("q", "k", "v", "do")}
    tensors.update({x: (F16, shape, ("out",)) for x in ("dq", "dk", "dv")})
    # log-sum-exp rows and deltas a forward would give (order 1): exp2 of the scores stays finite
    tensors.update(m=("float32", (Z * H * NQ,), ("uniform", 2, 4)), d=("float32", (Z * H * NQ,), ("uniform", -1, 1)))
    strides = [H * NQ * 64, NQ * 64, 64, 1]
    return run("06 _attn_bwd CAUSAL=%s" % causal, "06-fused-attention.tl", "_attn_bwd", "%d,1,%d" % (NQ // 128, Z * H),
               ["q", "k", "v", 0.125, "do", "dq", "dk", "dv", "m", "d", *strides, H, NQ], tensors,
               ["BLOCK_M1=32", "BLOCK_N1=128", "BLOCK_M2=128", "BLOCK_N2=32", "BLK_SLICE_FACTOR=2", "HEAD_DIM=64",
                "CAUSAL=%s" % causal],
               signature="*fp16:16,*fp16:16,*fp16:16,fp32,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,"
               "i32:16,i32:16,i32:16,i32:1,i32,i32:16", tol=(3e-2, 3e-2), warps=4, stages=5)


def block_scaled_nvfp4():
    """Tutorial 10's NVIDIA kernel in nvfp4: A [M, K] and B [N, K] two e2m1 a byte, their float8e4nv scales
    (one per 16 elements) in the 5-D layout its launcher makes, a [M, N] fp16 product."""
    m, n, k = 256, 256, 512
    scale_shape = (1, m // 128, k // 16 // 4, 2, 256)
    buffers = {"a": ("uint8", (m, k // 2), ("int", 0, 256)), "b": ("uint8", (n, k // 2), ("int", 0, 256)),
               "sa": ("fp8e4nv", scale_shape, ("uniform", 0, 2)), "sb": ("fp8e4nv", scale_shape, ("uniform", 0, 2)),
               "c": (F16, (m, n), ("out",))}
    strides = [2 * 8 * 512, 8 * 512, 512, 256, 1]
    scale_desc = lambda name: [name, *scale_shape, *strides]
    return run("10 block_scaled_matmul_kernel nvfp4", "10-block-scaled-matmul.tl", "block_scaled_matmul_kernel",
               "cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)",
               desc("a", m, k // 2) + scale_desc("sa") + desc("b", n, k // 2) + scale_desc("sb") + desc("c", m, n),
               buffers,
               ["M=%d" % m, "N=%d" % n, "K=%d" % k, "output_type=1", "ELEM_PER_BYTE_A=2", "ELEM_PER_BYTE_B=2",
                "VEC_SIZE=16", "BLOCK_M=128", "BLOCK_N=256", "BLOCK_K=256", "rep_m=1", "rep_n=2", "rep_k=4",
                "NUM_STAGES=4"],
               "tensordesc<u8[128, 128]>,tensordesc<fp8e4nv[1, 1, 4, 2, 256]>,tensordesc<u8[256, 128]>,"
               "tensordesc<fp8e4nv[1, 2, 4, 2, 256]>,tensordesc<fp16[128, 256]>", tol=(1e-2, 1e-2))


def grouped_gemm(tma):
    """Tutorial 08: a group of three products whose matrices the kernel finds through tables of addresses
    (ptrs: arguments), sizes and leading dimensions in int32 tables. The pointer kernel assumes whole
    blocks (multiples of config 2's 64 x 64 x 32); the descriptor kernel takes any sizes of 16-byte rows,
    B transposed as its launcher passes it."""
    groups = [(200, 136, 72), (96, 264, 144), (130, 64, 40)] if tma else [(128, 64, 96), (64, 192, 64), (192, 128, 32)]
    buffers, lds = {}, []
    for g, (m, n, k) in enumerate(groups):
        buffers["a%d" % g] = (F16, (m, k), ("uniform", -1, 1))
        buffers["b%d" % g] = (F16, (n, k) if tma else (k, n), ("uniform", -1, 1))
        buffers["c%d" % g] = (F16, (m, n), ("out",))
        lds += [k, k if tma else n, n]
    buffers["sizes"] = ("int32", (9,), ("values", [v for mnk in groups for v in mnk]))
    buffers["lds"] = ("int32", (9,), ("values", lds))
    tables = [("ptrs", ["%s%d" % (x, g) for g in range(3)]) for x in "abc"]
    defines = ["NUM_SM=4"] + (["FP8=False"] if tma else [])
    return run("08 grouped_matmul_%skernel" % ("tma_" if tma else ""), "08-grouped-gemm.tl",
               "grouped_matmul_tma_kernel" if tma else "grouped_matmul_kernel", "NUM_SM",
               tables + ["sizes", "lds", 3], buffers, defines, "*u64:16,*u64:16,*u64:16,*i32:16,*i32:16,i32",
               0 if tma else 2, MM_TOL)


N1 = 98437  # vector lengths: not a multiple of any block
LN_M, LN_N = 37, 781  # layer-norm rows and columns
SM_ROWS, SM_COLS = 137, 781

RUNS = [
    run("01 add_kernel", "01-vector-add.tl", "add_kernel", "cdiv(%d, BLOCK_SIZE)" % N1, ["x", "y", "z", N1],
        {"x": ("float32", (N1,), ("uniform", -1, 1)), "y": ("float32", (N1,), ("uniform", -1, 1)),
         "z": ("float32", (N1,), ("out",))}, ["BLOCK_SIZE=1024"]),
    run("02 softmax_kernel", "02-fused-softmax.tl", "softmax_kernel", "32",
        ["y", "x", SM_COLS, SM_COLS, SM_ROWS, SM_COLS],
        {"x": ("float32", (SM_ROWS, SM_COLS), ("uniform", -4, 4)), "y": ("float32", (SM_ROWS, SM_COLS), ("out",))},
        ["BLOCK_SIZE=1024", "num_stages=4"], tol=(1e-5, 0), warps=8),
    run("03 matmul_kernel leaky_relu config 0", "03-matrix-multiplication.tl", "matmul_kernel", MM_GRID,
        matmul_args("a", "b", "c", M3, N3, K3), MM_BUFFERS, ['ACTIVATION="leaky_relu"'], MM_SIG, 0, MM_TOL),
    run("03 matmul_kernel config 3", "03-matrix-multiplication.tl", "matmul_kernel", MM_GRID,
        matmul_args("a", "b", "c", M3, N3, K3), MM_BUFFERS, ['ACTIVATION=""'], MM_SIG, 3, MM_TOL),
    run("04 _dropout", "04-low-memory-dropout.tl", "_dropout", "cdiv(%d, BLOCK_SIZE)" % N1, ["x", "keep", "y", N1, 0.5],
        {"x": ("float32", (N1,), ("uniform", -1, 1)), "keep": ("int8", (N1,), ("int", 0, 2)),
         "y": ("float32", (N1,), ("out",))}, ["BLOCK_SIZE=1024"]),
    run("04 _seeded_dropout", "04-low-memory-dropout.tl", "_seeded_dropout", "cdiv(%d, BLOCK_SIZE)" % N1,
        ["x", "y", N1, 0.5, 123], {"x": ("float32", (N1,), ("uniform", -1, 1)), "y": ("float32", (N1,), ("out",))},
        ["BLOCK_SIZE=1024"]),
    run("05 _layer_norm_fwd_fused", "05-layer-norm.tl", "_layer_norm_fwd_fused", str(LN_M),
        ["x", "y", "w", "b", "mean", "rstd", LN_N, LN_N, 1e-5],
        {"x": (F16, (LN_M, LN_N), ("uniform", -2, 2)), "y": (F16, (LN_M, LN_N), ("out",)),
         "w": (F16, (LN_N,), ("uniform", -1, 1)), "b": (F16, (LN_N,), ("uniform", -1, 1)),
         "mean": ("float32", (LN_M,), ("out",)), "rstd": ("float32", (LN_M,), ("out",))},
        ["BLOCK_SIZE=1024"], "*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32,i32,fp32", tol=(1e-3, 1e-3)),
    # the partial sums of dw and db go through a lock in whatever order the programs take it
    run("05 _layer_norm_bwd_dx_fused", "05-layer-norm.tl", "_layer_norm_bwd_dx_fused", str(LN_M),
        ["dx", "dy", "dw", "db", "x", "w", "mean", "rstd", "lock", LN_N, LN_N],
        {"dx": (F16, (LN_M, LN_N), ("out",)), "dy": (F16, (LN_M, LN_N), ("uniform", -1, 1)),
         "dw": (F16, (8, LN_N), ("zeros",)), "db": (F16, (8, LN_N), ("zeros",)),
         "x": (F16, (LN_M, LN_N), ("uniform", -2, 2)), "w": (F16, (LN_N,), ("uniform", -1, 1)),
         "mean": ("float32", (LN_M,), ("uniform", -0.1, 0.1)), "rstd": ("float32", (LN_M,), ("uniform", 0.5, 1.5)),
         "lock": ("int32", (16,), ("zeros",))},
        ["GROUP_SIZE_M=8", "BLOCK_SIZE_N=1024"],
        "*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,*i32:16,i32,i32", tol=(2e-2, 2e-2)),
    run("05 _layer_norm_bwd_dwdb", "05-layer-norm.tl", "_layer_norm_bwd_dwdb", "cdiv(%d, BLOCK_SIZE_N)" % LN_N,
        ["pdw", "pdb", "dw", "db", 37, LN_N],
        {"pdw": (F16, (37, LN_N), ("uniform", -1, 1)), "pdb": (F16, (37, LN_N), ("uniform", -1, 1)),
         "dw": (F16, (LN_N,), ("out",)), "db": (F16, (LN_N,), ("out",))},
        ["BLOCK_SIZE_M=32", "BLOCK_SIZE_N=128"], "*fp16:16,*fp16:16,*fp16:16,*fp16:16,i32,i32", tol=(1e-2, 1e-2)),
    attention_forward(1, pointers=False),
    attention_forward(3, pointers=False),
    attention_forward(3, pointers=True),
    attention_forward_fp8(),
    run("06 _attn_bwd_preprocess", "06-fused-attention.tl", "_attn_bwd_preprocess", "%d,%d" % (NQ // 128, Z * H),
        ["o", "do", "delta", Z, H, NQ],
        {"o": (F16, (Z * H * NQ, 64), ("uniform", -1, 1)), "do": (F16, (Z * H * NQ, 64), ("uniform", -1, 1)),
         "delta": ("float32", (Z * H * NQ,), ("out",))},
        ["BLOCK_M=128", "HEAD_DIM=64"], "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32", tol=(1e-5, 1e-5)),
    attention_backward(False),
    attention_backward(True),
    run("07 asin_kernel", "07-extern-functions.tl", "asin_kernel", "cdiv(%d, BLOCK_SIZE)" % N1, ["x", "y", N1],
        {"x": ("float32", (N1,), ("uniform", -1.2, 1.2)), "y": ("float32", (N1,), ("out",))}, ["BLOCK_SIZE=1024"],
        tol=(4e-7, 0)),  # libdevice's asinf against the C library's: each within 2 ulp of the exact value
    grouped_gemm(tma=False),
    grouped_gemm(tma=True),
    run("09 matmul_kernel", "09-persistent-matmul.tl", "matmul_kernel", MM_GRID, matmul_args("a", "b", "c", M3, N3, K3),
        MM_BUFFERS, signature=MM_SIG, config=0, tol=MM_TOL),
    run("09 matmul_kernel_persistent", "09-persistent-matmul.tl", "matmul_kernel_persistent", MM_PERSISTENT_GRID,
        matmul_args("a", "b", "c", M3, N3, K3), MM_BUFFERS, ["NUM_SMS=8"], MM_SIG, 0, MM_TOL),
    run("09 matmul_kernel_tma", "09-persistent-matmul.tl", "matmul_kernel_tma", MM_GRID,
        desc("a", M3, K3) + desc("b", N3, K3) + desc("c", M3, N3) + [M3, N3, K3], MM_T_BUFFERS,
        ["FP8_OUTPUT=False", "WARP_SPECIALIZE=False"],
        "tensordesc<fp16[128, 64]>,tensordesc<fp16[128, 64]>,tensordesc<fp16[128, 128]>,i32,i32,i32", 0, MM_TOL),
    run("09 matmul_kernel_tma fp8", "09-persistent-matmul.tl", "matmul_kernel_tma", MM_GRID,
        desc("a", M3, K3) + desc("b", N3, K3) + desc("c", M3, N3) + [M3, N3, K3],
        {"a": ("fp8e4nv", (M3, K3), ("uniform", -1, 1)), "b": ("fp8e4nv", (N3, K3), ("uniform", -1, 1)),
         "c": ("fp8e4nv", (M3, N3), ("out",))}, ["FP8_OUTPUT=True", "WARP_SPECIALIZE=False"],
        "tensordesc<fp8e4nv[128, 64]>,tensordesc<fp8e4nv[128, 64]>,tensordesc<fp8e4nv[128, 128]>,i32,i32,i32", 0,
        (0.13, 2e-2)),
    run("09 matmul_kernel_tma_persistent", "09-persistent-matmul.tl", "matmul_kernel_tma_persistent",
        MM_PERSISTENT_GRID, desc("a", M3, K3) + desc("b", N3, K3) + desc("c", M3, N3) + [M3, N3, K3], MM_T_BUFFERS,
        ["FP8_OUTPUT=False", "WARP_SPECIALIZE=False", "EPILOGUE_SUBTILE=True", "NUM_SMS=8"],
        "tensordesc<fp16[128, 64]>,tensordesc<fp16[128, 64]>,tensordesc<fp16[128, 64]>,i32,i32,i32", 0, MM_TOL),
    run("09 matmul_kernel_descriptor_persistent", "09-persistent-matmul.tl", "matmul_kernel_descriptor_persistent",
        MM_PERSISTENT_GRID, ["a", "b", "c", M3, N3, K3], MM_T_BUFFERS,
        ["EPILOGUE_SUBTILE=False", "NUM_SMS=8", "WARP_SPECIALIZE=False", "FLATTEN=False"],
        "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32:16", 0, MM_TOL),
    block_scaled_nvfp4(),
    run("11 add_kernel USE_GDC", "11-programmatic-dependent-launch.tl", "add_kernel", "cdiv(%d, BLOCK_SIZE)" % N1,
        ["x", "y", "z", N1], {"x": ("float32", (N1,), ("uniform", -1, 1)), "y": ("float32", (N1,), ("uniform", -1, 1)),
                              "z": ("float32", (N1,), ("out",))}, ["BLOCK_SIZE=1024", "USE_GDC=True"]),
]

# tilec run's name of each dtype used above
TILE_DTYPE = {"float16": "fp16", "float32": "fp32", "int8": "i8", "int32": "i32", "uint8": "u8", "fp8e5": "fp8e5",
              "fp8e4nv": "fp8e4nv"}


def fp8_values(dtype, codes):
    """The values of fp8 codes (NaN for NaN codes): e5m2 is the top byte of an fp16; e4m3fn by its fields."""
    codes = codes.astype(np.uint16)
    if dtype == "fp8e5":
        return (codes << 8).view(np.float16).astype(np.float64)
    exp, man = (codes >> 3) & 15, (codes & 7).astype(np.float64)
    v = np.where(exp > 0, (8 + man) * 2.0 ** (exp.astype(np.float64) - 10), man * 2.0 ** -9)
    v = np.where((codes & 0x7f) == 0x7f, np.nan, v)
    return np.where(codes & 0x80, -v, v)


def make_input(rng, dtype, shape, how):
    if dtype.startswith("fp8"):  # codes of finite values in [-2, 2]: e5m2 0x00..0x40, e4m3 0x00..0x40
        return (rng.integers(0, 0x41, shape) | rng.integers(0, 2, shape) << 7).astype(np.uint8)
    if how[0] == "values":
        return np.array(how[1], dtype=dtype).reshape(shape)
    if how[0] == "uniform":
        return rng.uniform(how[1], how[2], shape).astype(dtype)
    return rng.integers(how[1], how[2], shape).astype(dtype)


def as_values(spec, name, array):
    dtype = spec["buffers"][name][0]
    return fp8_values(dtype, array) if dtype.startswith("fp8") else array.astype(np.float64)


def command(tilec, spec, tutorials, paths, device):
    cmd = [tilec, "run", os.path.join(tutorials, spec["file"]), "--kernel", spec["kernel"], "--grid", spec["grid"],
           "--device", device]
    for d in spec["defines"]:
        cmd += ["-D", d]
    if spec["signature"]:
        cmd += ["--signature", spec["signature"]]
    if spec["config"] is not None:
        cmd += ["--config", str(spec["config"])]
    for option in ("warps", "stages"):  # the launcher's num_warps= and num_stages=
        if spec[option]:
            cmd += ["--num-" + option, str(spec[option])]
    cmd.append("--")
    for a in spec["args"]:
        if isinstance(a, tuple):  # ("ptrs", names): a table of those buffers' addresses
            cmd.append("ptrs:" + ",".join(buffer_arg(spec, paths, device, name) for name in a[1]))
        elif isinstance(a, str):
            cmd.append(buffer_arg(spec, paths, device, a))
        else:
            cmd.append(repr(a))
    return cmd


def buffer_arg(spec, paths, device, name):
    dtype, shape, how = spec["buffers"][name]
    if how[0] in ("out", "zeros"):
        return "%s:%s:%s:%s" % (how[0], paths[device][name], TILE_DTYPE[dtype], "x".join(str(d) for d in shape))
    return paths["in"][name] + (":" + dtype if dtype.startswith("fp8") else "")


def compare(spec, got, want):
    """'' when every element matches, else the first few that do not."""
    rtol, atol = spec["tol"]
    bad = []
    for name in got:
        g, w = as_values(spec, name, got[name]).ravel(), as_values(spec, name, want[name]).ravel()
        same_nan = np.isnan(g) == np.isnan(w)
        close = np.isnan(g) | (np.abs(g - w) <= atol + rtol * np.maximum(np.abs(g), np.abs(w)))
        where = np.flatnonzero(~(same_nan & close))
        if where.size:
            i = where[0]
            bad.append("%s: %d of %d differ (first at %d: gpu %r, interpreter %r)" % (name, where.size, g.size, i, g[i], w[i]))
    return "; ".join(bad)


def run_one(args, spec, seed, work):
    rng = np.random.default_rng(seed)
    paths = {"in": {}, "cpu": {}, "gpu": {}}
    for name, (dtype, shape, how) in spec["buffers"].items():
        if how[0] in ("out", "zeros"):
            for device in ("cpu", "gpu"):
                paths[device][name] = os.path.join(work, "%s.%s.npy" % (name, device))
        else:
            paths["in"][name] = os.path.join(work, name + ".npy")
            np.save(paths["in"][name], make_input(rng, dtype, shape, how))
    outputs = {}
    for device in args.devices:
        cmd = command(args.tilec, spec, args.tutorials, paths, device)
        start = time.time()
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            return "%s run failed (%.1f s): %s\n  %s" % (device, time.time() - start, done.stderr.strip()[-2000:],
                                                         " ".join(cmd))
        outputs[device] = {n: np.load(p) for n, p in paths[device].items()}
    if len(outputs) == 2:
        problem = compare(spec, outputs["gpu"], outputs["cpu"])
        if problem:
            return problem
    first = outputs[args.devices[0]]
    written = sum(int(np.count_nonzero(~np.isnan(as_values(spec, n, v)))) for n, v in first.items())
    return "", "%d of %d output elements written" % (written, sum(v.size for v in first.values()))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tilec", required=True)
    p.add_argument("--tutorials", required=True, help="the folder of the tutorials' .tl copies")
    p.add_argument("--only", default=".", help="a regular expression over the runs' names")
    p.add_argument("--devices", default="cpu,gpu")
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    args.devices = args.devices.split(",")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print("seed %d, devices %s" % (seed, ",".join(args.devices)))
    failed = 0
    for i, spec in enumerate(r for r in RUNS if re.search(args.only, r["name"])):
        with tempfile.TemporaryDirectory() as work:
            start = time.time()
            result = run_one(args, spec, seed + i, work)
        problem, note = result if isinstance(result, tuple) else (result, "")
        failed += bool(problem)
        print("%-4s %-44s %6.1f s  %s" % ("FAIL" if problem else "ok", spec["name"], time.time() - start,
                                          problem or note))
    print("%d of %d runs failed" % (failed, sum(1 for r in RUNS if re.search(args.only, r["name"]))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
