"""tile's kernels launched from Python, for timing them in the same harness
as Triton's (bench/triton_bench.py --tilec PATH): tilec compiles the kernel
ahead of time to a cubin with its metadata (docs/abi.md), and the CUDA
driver, through ctypes, loads and launches it on torch's current stream in
torch's context.  Arguments are specialised as tile's JIT does: pointers and
integers divisible by 16 get ':16', integers equal to 1 ':1' (then not
passed)."""
import ctypes
import json
import os
import shutil
import subprocess
import tempfile

_cuda = None


def _driver():
    global _cuda
    if _cuda is None:
        _cuda = ctypes.CDLL("libcuda.so.1")
    return _cuda


def _check(result, what):
    if result != 0:
        raise RuntimeError("%s failed: CUDA error %d" % (what, result))


def torch_capability():
    """The current GPU's compute capability, as the JIT targets it (sm_90a on an H100 or H200)."""
    import torch
    return torch.cuda.get_device_capability()


_DTYPES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.int32": "i32",
           "torch.int64": "i64", "torch.int8": "i8", "torch.uint8": "u8",
           "torch.float8_e5m2": "fp8e5", "torch.float8_e4m3fn": "fp8e4nv"}


class TensorDesc:
    """A host tensor descriptor (Triton's TensorDescriptor): one argument, passed as its base, its shape (i32
    each) and its strides (i64 each, the last 1), as Triton's launcher expands it (docs/language.md)."""

    def __init__(self, tensor, shape, strides, block_shape):
        self.tensor, self.shape, self.strides, self.block_shape = tensor, list(shape), list(strides), block_shape

    def spec(self):
        return "tensordesc<%s[%s]>" % (_DTYPES[str(self.tensor.dtype)], ", ".join(map(str, self.block_shape)))

    def flat(self):
        return [self.tensor] + self.shape + self.strides


def flatten(args):
    """The arguments as the kernel's positions count them (a descriptor's fields each one)."""
    return [x for a in args for x in (a.flat() if isinstance(a, TensorDesc) else [a])]


def _spec(value):
    """The signature entry tile's JIT would give this argument (torch tensor, descriptor, float or int)."""
    if isinstance(value, TensorDesc):
        return value.spec()
    if hasattr(value, "data_ptr"):
        return "*%s%s" % (_DTYPES[str(value.dtype)], ":16" if value.data_ptr() % 16 == 0 else "")
    if isinstance(value, float):
        return "fp32"
    return "i32:1" if value == 1 else "i32:16" if value % 16 == 0 else "i32"


def signature(args):
    """tilec's --signature for these arguments, as tile's JIT specialises them."""
    return ",".join(_spec(a) for a in args)


_TMA_DTYPES = {"fp16": (6, 2), "bf16": (9, 2), "fp32": (7, 4), "fp8e5": (0, 1), "fp8e4nv": (0, 1)}  # (CUtensorMapDataType, bytes)
_TMA_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}          # CUtensorMapSwizzle


def _field(spec, args):
    """A tensor map's extent or stride: {"arg": P}, {"value": N}, or {"args": [P, ...], "value": N} (a product)."""
    positions = [spec["arg"]] if "arg" in spec else spec.get("args", [])
    value = int(spec.get("value", 1))
    for p in positions:
        value *= int(args[p])
    return value


def _tensor_map(m, args):
    """The CUtensorMap metadata entry m describes, encoded for these arguments (docs/abi.md, "tensor_maps")."""
    args = flatten(args)
    base, (dtype, elem) = args[m["base"]], _TMA_DTYPES[m["dtype"]]
    rank = len(m["dims"])
    aligned = ctypes.create_string_buffer(128 + 64)  # the driver wants the map 64-byte aligned
    at = (ctypes.addressof(aligned) + 63) // 64 * 64
    dims = (ctypes.c_uint64 * rank)(*[max(1, _field(d, args)) for d in m["dims"]])
    strides = (ctypes.c_uint64 * (rank - 1))(*[_field(s, args) * elem for s in m["strides"]])
    box = (ctypes.c_uint32 * rank)(*m["box"])
    ones = (ctypes.c_uint32 * rank)(*[1] * rank)
    _check(_driver().cuTensorMapEncodeTiled(ctypes.c_void_p(at), dtype, rank,
                                            ctypes.c_void_p(base.data_ptr()), dims, strides, box, ones, 0,
                                            _TMA_SWIZZLE[m["swizzle"]], 2, 0), "cuTensorMapEncodeTiled")
    return aligned, at


def _thread_registers(threads):
    """The most registers a thread of a program of `threads` threads may have (src/support/arch.h)."""
    n = 65536 // threads
    return 255 if n > 255 else n - n % 8


class TileKernel:
    """One specialisation of a kernel in a .tl file, compiled by tilec and loaded into torch's context.

    As tile's JIT does (docs/abi.md, section 6), the first launch whose grid has no more programs than the
    GPU has multiprocessors recompiles the kernel with the most registers a thread may have stated, unless
    it has a cap or uses that many already; TILE_CUBIN_ONE_WAVE=0 turns that off (for comparisons)."""

    def __init__(self, tilec, source, args, defines, num_warps, kernel=None, num_stages=None, refill=None, tma=None):
        self.one_wave = os.environ.get("TILE_CUBIN_ONE_WAVE", "1") != "0"
        self.command = self._command(tilec, source, args, defines, num_warps, kernel, num_stages, refill, tma)
        self._load([])

    @staticmethod
    def _command(tilec, source, args, defines, num_warps, kernel, num_stages, refill, tma):
        command = [tilec, source, "--signature", signature(args), "--num-warps", str(num_warps)]
        command += ["--kernel", kernel] if kernel else []
        command += ["--num-stages", str(num_stages)] if num_stages else []
        command += ["--refill", refill] if refill else []
        command += ["--tma", tma] if tma else []
        major, minor = torch_capability()
        command += ["--arch", "sm_%d%d%s" % (major, minor, "a" if (major, minor) == (9, 0) else "")]
        for name, value in defines.items():
            command += ["-D", "%s=%s" % (name, value)]
        return command

    def _load(self, extra):
        self.dir = tempfile.mkdtemp(prefix="tile-cubin-")
        cubin = os.path.join(self.dir, "kernel.cubin")
        subprocess.run(self.command + extra + ["-o", cubin], check=True)
        with open(os.path.join(self.dir, "kernel.json")) as f:
            self.meta = json.load(f)
        self.types = {p["position"]: p["type"] for p in self.meta["params"]}
        cuda = _driver()
        self.module, self.function = ctypes.c_void_p(), ctypes.c_void_p()
        _check(cuda.cuModuleLoad(ctypes.byref(self.module), cubin.encode()), "cuModuleLoad")
        _check(cuda.cuModuleGetFunction(ctypes.byref(self.function), self.module, self.meta["name"].encode()),
               "cuModuleGetFunction")
        if self.meta["shared"] > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(cuda.cuFuncSetAttribute(self.function, 8, self.meta["shared"]), "cuFuncSetAttribute")
        shutil.rmtree(self.dir, ignore_errors=True)  # loaded: the files are not needed any more

    def _take_one_wave(self, grid):
        import torch
        cap = _thread_registers(32 * self.meta["num_warps"])
        programs = 1
        for g in grid:
            programs *= g
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        self.one_wave = False  # decided once, as the JIT compiles the variant at the first such launch
        if programs <= sms and "maxnreg" not in self.meta and 0 <= self.meta["registers"] < cap:
            _driver().cuModuleUnload(self.module)
            self._load(["--maxnreg", str(cap)])

    def launch(self, grid, args, stream):
        if self.one_wave:
            self._take_one_wave(grid)
        args = flatten(args)
        values = []
        for position, a in enumerate(args):
            kind = self.types.get(position)  # None: a ':1' argument, not passed
            if kind is None:
                continue
            values.append(ctypes.c_uint64(a.data_ptr()) if kind.startswith("*") else ctypes.c_float(a)
                          if kind == "fp32" else ctypes.c_int64(a) if kind == "i64" else ctypes.c_int32(a))
        pointers = [ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values]
        maps = [_tensor_map(m, args) for m in self.meta.get("tensor_maps", [])]  # kept alive to the launch
        pointers += [ctypes.c_void_p(at) for _, at in maps]
        params = (ctypes.c_void_p * len(pointers))(*pointers)
        g = list(grid) + [1] * (3 - len(grid))
        _check(_driver().cuLaunchKernel(self.function, g[0], g[1], g[2], 32 * self.meta["num_warps"], 1, 1,
                                        self.meta["shared"], ctypes.c_void_p(stream), params, None),
               "cuLaunchKernel")
