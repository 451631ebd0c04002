#!/usr/bin/env python3
"""Hostile inputs for the IR readers (issue #22): long tile IR and GPU-layout IR
texts, written at test time, read back by tilec (`tilec FILE.tir`).  The reader
once counted each place from the text's start (quadratic: a fuzzed chain of
comparisons took minutes); it must read these within ctest's TIMEOUT and give
the same text back.

usage: ir_text.py TILEC OUTDIR"""
import os
import subprocess
import sys

STATEMENTS = 20000


def long_kernel():
    body = "".join("    x = x * n + %d\n" % (i % 7 + 1) for i in range(STATEMENTS))
    return ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, n):\n    x = n\n" + body +
            "    tl.store(x_ptr, x)\n")


def tilec(*argv):
    p = subprocess.run(list(argv), capture_output=True, text=True)
    if p.returncode:
        print("FAIL: %s: exit %d\n%s" % (" ".join(argv), p.returncode, p.stderr[:2000]))
    return p.returncode == 0


def main():
    exe, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    source = os.path.join(out, "long.tl")
    with open(source, "w") as f:
        f.write(long_kernel())
    failed = 0
    for stage in ("tir", "tgir"):
        first, again = os.path.join(out, "long." + stage), os.path.join(out, "again." + stage)
        ok = tilec(exe, source, "--signature", "*i32,i32", "--emit=" + stage, "-o", first) and \
            tilec(exe, first, "--emit=" + stage, "-o", again)
        if ok and open(first).read() != open(again).read():
            print("FAIL: %s read back is not the same text" % first)
            ok = False
        size = os.path.getsize(first) if os.path.exists(first) else 0
        print("%s %s: %d bytes of %s read back" % ("ok  " if ok else "FAIL", stage, size, stage))
        failed += not ok
    print("%d passed, %d failed" % (2 - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
