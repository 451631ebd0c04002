# Device helpers of the package (program ids as int64, a scale), and host
# code that tile never runs: a constant only the host uses.
import inspect

import triton
import triton.language as tl

HOST_ONLY = "cache_results" in inspect.signature(triton.autotune).parameters
SCALE = tl.constexpr(2.0)


@triton.jit
def program_id(axis: tl.constexpr):
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def scaled(x):
    return x * SCALE


# What a library's device module exports for its kernels' autotune configs (fla's IS_AMD).
WIDE = True


# Host code a kernel module imports without its decorators reading it (fla's device probes): the
# host evaluator that runs those imports must pass over it quietly.
def _platform():
    try:
        import torch
        return torch.version.hip is not None
    except ImportError:
        return False


IS_HIP = _platform()
