"""tile and Triton on the same matmul config, one config at a time: each of
the tutorial's autotune configs at a few shapes, both timed by
triton_bench.py's Timer (tile's kernel: tilec's cubin, bench/tile_cubin.py),
to tell a slower kernel from a different autotuner choice.  GPU machine:

    python3 bench/matmul_configs.py TILEC [MxNxK ...] [--configs 0,4,7]"""
import argparse
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tile_cubin import TileKernel  # noqa: E402
from triton_bench import MATMUL_CONFIGS, Timer, matmul_call, matmul_kernel  # noqa: E402

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "matmul", "matmul.tl")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tilec")
    parser.add_argument("shapes", nargs="*", default=["1024x1024x1024", "2048x2048x2048", "128x4096x4096"])
    parser.add_argument("--configs", default=",".join(str(i) for i in range(len(MATMUL_CONFIGS))))
    args = parser.parse_args()
    timer = Timer(False)
    print("%-16s %-26s %10s %10s %7s" % ("shape", "config", "tile TF/s", "triton", "ratio"))
    for shape in args.shapes:
        m, n, k = (int(x) for x in shape.split("x"))
        a = torch.randn(m, k, device="cuda", dtype=torch.float16) / 8
        b = torch.randn(k, n, device="cuda", dtype=torch.float16) / 8
        want = (a.float() @ b.float())
        for index in (int(c) for c in args.configs.split(",")):
            cfg = MATMUL_CONFIGS[index]
            kw = cfg.kwargs
            grid = (triton.cdiv(m, kw["BLOCK_SIZE_M"]) * triton.cdiv(n, kw["BLOCK_SIZE_N"]), )
            c_triton, c_tile = torch.empty(m, n, device="cuda", dtype=torch.float16), torch.empty(m, n, device="cuda",
                                                                                                   dtype=torch.float16)
            call = list(matmul_call(a, b, c_tile)[1])
            triton_args = matmul_call(a, b, c_triton)[1]
            defines = dict(kw, ACTIVATION='""')
            tk = TileKernel(args.tilec, SOURCE, call, defines, cfg.num_warps, kernel="matmul_kernel",
                            num_stages=cfg.num_stages)
            stream = torch.cuda.current_stream().cuda_stream
            tile_ms = timer.median_ms(lambda s: tk.launch(grid, call, stream), 1)
            triton_ms = timer.median_ms(lambda s: matmul_kernel[grid](
                *triton_args, ACTIVATION="", num_warps=cfg.num_warps, num_stages=cfg.num_stages, **kw), 1)
            ok = all(torch.allclose(c.float(), want, rtol=1e-2, atol=1e-2) for c in (c_tile, c_triton))
            tflops = lambda ms: 2 * m * n * k / (ms * 1e9)
            print("%-16s %-26s %10.1f %10.1f %7.2f%s" % (
                shape, "%d: %dx%dx%d w%d s%d" % (index, kw["BLOCK_SIZE_M"], kw["BLOCK_SIZE_N"], kw["BLOCK_SIZE_K"],
                                                 cfg.num_warps, cfg.num_stages),
                tflops(tile_ms), tflops(triton_ms), triton_ms / tile_ms, "" if ok else "  WRONG"))


if __name__ == "__main__":
    main()
