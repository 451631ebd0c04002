"""Triton's code for the tutorial kernels, to read beside tile's: for each
case, the TTGIR, PTX, SASS (cuobjdump, when there is one) and the metadata
Triton compiled (with the registers a thread uses), written to
OUT_DIR/NAME.{ttgir,ptx,sass,json}.  Without --arch it compiles for the GPU
present (the GPU machine); with --arch it
needs no GPU, no driver and no torch: `pip install triton==3.6.0` is enough,
so Triton's code can be read on the development machine.

    python3 bench/triton_asm.py OUT_DIR [--arch sm_90a] [softmax:N[:WARPS] | matmul[:CONFIG]]...

softmax:N uses the tutorial's BLOCK_SIZE and num_warps for n_cols = N (or
WARPS); matmul is config 0 of the tutorial's list with leaky_relu, as
bench/triton_bench.py compiles it for the compile time; matmul:N is config N
without epilogue, as the autotuned benchmark runs it.  The arguments are
specialised as a launch on 1024x1024 fp16 matrices (softmax: 4096 x N fp32)
would specialise them: pointers and integers divisible by 16 marked so,
unit strides constant.  Compare with tile's: tilec --emit=ptx, and
cuobjdump -sass on tilec's cubin."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import triton
from triton.backends.compiler import GPUTarget

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tutorial_kernels import MATMUL_CONFIGS, matmul_kernel, softmax_kernel  # noqa: E402


class Case:
    """A kernel, its parameters' types (Triton's signature), constexpr values and options."""

    def __init__(self, name, fn, types, constexprs, num_warps, num_stages=3):
        """types: each parameter's type in tilec's form ("*fp16:16", "i32"); those in constexprs become constexpr."""
        self.name, self.fn, self.constexprs = name, fn, constexprs
        self.signature = {p: "constexpr" if p in constexprs else t.removesuffix(":16") for p, t in types.items()}
        self.divisible = [i for i, (p, t) in enumerate(types.items()) if p not in constexprs and t.endswith(":16")]
        self.options = {"num_warps": num_warps, "num_stages": num_stages}


def softmax_case(n, warps):
    block = triton.next_power_of_2(n)
    if warps is None:
        warps = 16 if block >= 4096 else 8 if block >= 2048 else 4
    i32 = "i32:16" if n % 16 == 0 else "i32"
    types = {"output_ptr": "*fp32:16", "input_ptr": "*fp32:16", "input_row_stride": i32, "output_row_stride": i32,
             "n_cols": i32, "BLOCK_SIZE": "constexpr"}
    return Case("softmax_%d" % n, softmax_kernel, types, {"BLOCK_SIZE": block}, warps)


def matmul_case(config=None):
    """Config 0 with leaky_relu (the compile-time case), or config N of the autotune list without epilogue."""
    types = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32:16", "N": "i32:16",
             "K": "i32:16", "stride_am": "i32:16", "stride_ak": "i32", "stride_bk": "i32:16", "stride_bn": "i32",
             "stride_cm": "i32:16", "stride_cn": "i32"}
    unit_strides = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
    cfg = MATMUL_CONFIGS[config or 0]
    meta = dict(cfg.kwargs, ACTIVATION="leaky_relu" if config is None else "", **unit_strides)
    types.update({k: "constexpr" for k in cfg.kwargs}, ACTIVATION="constexpr")
    name = "matmul" if config is None else "matmul_config%d" % config
    return Case(name, matmul_kernel, types, meta, cfg.num_warps, cfg.num_stages)


def target_of(arch):
    """sm_90a, sm_90, sm_80...: the target to compile for; None: the GPU present."""
    if arch is None:
        return triton.runtime.driver.active.get_current_target()
    m = re.fullmatch(r"sm_(\d+)a?", arch)
    if not m:
        sys.exit(f"triton_asm.py: --arch {arch}: expected sm_NN or sm_NNa")
    return GPUTarget("cuda", int(m.group(1)), 32)


def compile_case(case, target):
    attrs = {(i, ): [["tt.divisibility", 16]] for i in case.divisible}
    source = triton.compiler.ASTSource(fn=case.fn, signature=case.signature, constexprs=case.constexprs, attrs=attrs)
    return triton.compile(source, target=target, options=case.options)


def cuobjdump(option, cubin):
    """cuobjdump's output for the cubin, or None without cuobjdump."""
    tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    if not os.path.exists(tool):
        return None
    done = subprocess.run([tool, option, cubin], capture_output=True, text=True)
    return done.stdout or done.stderr


def registers_of(cubin):
    """Registers a thread of the kernel uses (cuobjdump -res-usage), or None."""
    usage = cuobjdump("-res-usage", cubin)
    found = re.search(r"REG:(\d+)", usage or "")
    return int(found.group(1)) if found else None


def dump(out, case, kernel):
    for stage in ("ttgir", "ptx"):
        with open(os.path.join(out, f"{case.name}.{stage}"), "w") as f:
            f.write(kernel.asm[stage])
    cubin = os.path.join(out, f"{case.name}.cubin")
    with open(cubin, "wb") as f:
        f.write(kernel.asm["cubin"])
    sass = cuobjdump("-sass", cubin)
    if sass is not None:
        with open(os.path.join(out, f"{case.name}.sass"), "w") as f:
            f.write(sass)
    registers = registers_of(cubin)
    os.unlink(cubin)
    meta = {k: v for k, v in kernel.metadata._asdict().items() if isinstance(v, (int, float, str, bool))}
    if registers is not None:
        meta["registers"] = registers
    with open(os.path.join(out, f"{case.name}.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(case.name, "shared", meta.get("shared"), "registers", meta.get("registers"), "num_warps",
          meta.get("num_warps"), "num_stages", meta.get("num_stages"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("cases", nargs="+")
    parser.add_argument("--arch", help="compile for this target without a GPU (sm_90a, sm_80, ...)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    target = target_of(args.arch)
    for text in args.cases:
        parts = text.split(":")
        if parts[0] == "softmax" and len(parts) > 1:
            case = softmax_case(int(parts[1]), int(parts[2]) if len(parts) > 2 else None)
        elif parts[0] == "matmul":
            case = matmul_case(int(parts[1]) if len(parts) > 1 else None)
        else:
            sys.exit(f"triton_asm.py: unknown case {text}")
        dump(args.out, case, compile_case(case, target))


if __name__ == "__main__":
    main()
