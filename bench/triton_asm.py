"""Triton's code for the tutorial kernels, to read beside tile's: for each
case, the TTGIR, PTX and SASS (cuobjdump) and the metadata Triton compiled,
written to OUT_DIR/NAME.{ttgir,ptx,sass,json}.  Runs on the GPU machine
(Triton needs a GPU to compile for).

    python3 bench/triton_asm.py OUT_DIR [softmax:N[:WARPS] | matmul[:CONFIG]]...

softmax:N uses the tutorial's BLOCK_SIZE and num_warps for n_cols = N (or
WARPS); matmul is config 0 of the tutorial's list with leaky_relu, as
bench/triton_bench.py compiles it for the compile time; matmul:N is config N
without epilogue, as the autotuned benchmark runs it.  Compare with tile's: tilec --emit=ptx, and
cuobjdump -sass on tilec's cubin."""
import json
import os
import subprocess
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton_bench import MATMUL_CONFIGS, matmul_kernel, softmax_kernel  # noqa: E402


def softmax_case(n, warps):
    x = torch.randn(4096, n, device="cuda")
    y = torch.empty_like(x)
    block = triton.next_power_of_2(n)
    if warps is None:
        warps = 16 if block >= 4096 else 8 if block >= 2048 else 4
    return softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n, BLOCK_SIZE=block, num_warps=warps,
                                 grid=(4096, ))


def matmul_case(config=None):
    """Config 0 with leaky_relu (the compile-time case), or config N of the autotune list without epilogue."""
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    if config is None:
        meta = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION="leaky_relu",
                    num_stages=3, num_warps=8)
    else:
        cfg = MATMUL_CONFIGS[config]
        meta = dict(cfg.kwargs, ACTIVATION="", num_stages=cfg.num_stages, num_warps=cfg.num_warps)
    return matmul_kernel.warmup(a, b, c, 1024, 1024, 1024, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                c.stride(0), c.stride(1), grid=(1, ), **meta)


def dump(out, name, kernel):
    for stage in ("ttgir", "ptx"):
        with open(os.path.join(out, f"{name}.{stage}"), "w") as f:
            f.write(kernel.asm[stage])
    cubin = os.path.join(out, f"{name}.cubin")
    with open(cubin, "wb") as f:
        f.write(kernel.asm["cubin"])
    sass = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True)
    with open(os.path.join(out, f"{name}.sass"), "w") as f:
        f.write(sass.stdout or sass.stderr)
    os.unlink(cubin)
    meta = {k: v for k, v in kernel.metadata._asdict().items() if isinstance(v, (int, float, str, bool))}
    if hasattr(kernel, "_init_handles"):
        kernel._init_handles()  # loads the module: registers and spills are known from then on
    meta.update(n_regs=getattr(kernel, "n_regs", None), n_spills=getattr(kernel, "n_spills", None))
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(name, "registers", meta["n_regs"], "spills", meta["n_spills"], "shared", meta.get("shared"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for case in sys.argv[2:]:
        parts = case.split(":")
        if parts[0] == "softmax":
            dump(out, f"softmax_{parts[1]}", softmax_case(int(parts[1]), int(parts[2]) if len(parts) > 2 else None))
        elif parts[0] == "matmul":
            config = int(parts[1]) if len(parts) > 1 else None
            dump(out, "matmul" if config is None else "matmul_config%d" % config, matmul_case(config))
        else:
            sys.exit(f"triton_asm.py: unknown case {case}")


if __name__ == "__main__":
    main()
