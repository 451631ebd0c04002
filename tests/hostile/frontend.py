#!/usr/bin/env python3
"""Hostile inputs for the frontend (issue #22): sources too deep or too large
for a recursive compiler, written here at test time (nothing large is checked
in).  tilec must give the exact located error and exit 1: no crash (a signal),
no hang (ctest's TIMEOUT), no silent success.

usage: frontend.py TILEC OUTDIR [CASE...]   (no CASE: all of them)
       frontend.py --seeds OUTDIR            (small deep inputs for the fuzzer's corpus)"""
import os
import subprocess
import sys

HEAD = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, n):\n"  # the body is line 6
DEEP = "nested too deeply (limit 1000 levels of expressions and blocks)"
INDENT = "too many levels of indentation (the limit is 100)"  # the lexer's, as Python's
N = 40000


def kernel(body):
    return HEAD + body + "    tl.store(x_ptr, x)\n"


def chain(sep):
    return kernel("    x = " + sep.join(["n"] * N) + "\n")


def prefix(op, core="n"):
    return kernel("    x = " + op * N + core + "\n")


def nested_blocks(header):
    lines = [" " * (4 + i) + header + "\n" for i in range(1500)]
    return kernel("    x = n\n" + "".join(lines) + " " * 1504 + "x = 1\n")


def helpers():
    """60 helpers, each 900 levels deep around the call of the next: each is
    within the limit, but inlined they would nest 54,000 deep."""
    src = "import triton\nimport triton.language as tl\n\n"
    for i in range(60):
        inner = "h%d(x)" % (i + 1) if i < 59 else "x"
        src += "@triton.jit\ndef h%d(x):\n    return %s%s\n\n" % (i, "-" * 900, inner)
    return src + "@triton.jit\ndef k(x_ptr, n):\n    x = h0(n)\n    tl.store(x_ptr, x)\n"


def many_kernels():
    return "import triton\nimport triton.language as tl\n\n" + "".join(
        "@triton.jit\ndef k%d(x_ptr):\n    tl.store(x_ptr, %d)\n\n" % (i, i) for i in range(20000))


def helper_tree():
    """20,000 @jit functions: the kernel (defined last) calls h0, and h_i calls
    h_2i+1 and h_2i+2, so the kernel is the one function no other calls."""
    src = "import triton\nimport triton.language as tl\n\n"
    for i in range(20000):
        kids = [c for c in (2 * i + 1, 2 * i + 2) if c < 20000]
        value = " + ".join("h%d(x)" % c for c in kids) or "x"
        src += "@triton.jit\ndef h%d(x):\n    return %s\n\n" % (i, value)
    return src + "@triton.jit\ndef k(x_ptr, n):\n    tl.store(x_ptr, h0(n))\n"


# name: (source, the first line of stderr after the file name ('...' at the
# end: its start), tilec's exit status).  Finding the kernel in a file of
# 20,000 used to be quadratic (283 s); these must finish within the TIMEOUT.
CASES = {
    "pow": (chain("**"), "6:3006: error: " + DEEP),
    "and": (chain(" and "), "6:234011: error: " + DEEP),
    "or": (chain(" or "), "6:195011: error: " + DEEP),
    "compare": (chain(" < "), "6:156011: error: " + DEEP),
    "plus": (chain(" + "), "6:156011: error: " + DEEP),
    "bitor": (chain(" | "), "6:156011: error: " + DEEP),
    "minus": (prefix("-"), "6:1008: error: " + DEEP),
    "not": (prefix("not "), "6:4005: error: " + DEEP),
    "invert": (prefix("~"), "6:1008: error: " + DEEP),
    "parens": (kernel("    x = " + "(" * N + "n" + ")" * N + "\n"), "6:1008: error: " + DEEP),
    "lists": (kernel("    x = " + "[" * N + "n" + "]" * N + "\n"), "6:1008: error: " + DEEP),
    "calls": (kernel("    x = " + "abs(" * N + "n" + ")" * N + "\n"), "6:4005: error: " + DEEP),
    "ifexp": (kernel("    x = " + "n if n else " * N + "n\n"), "6:11997: error: " + DEEP),
    "attributes": (kernel("    x = n" + ".a" * N + "\n"), "6:78013: error: " + DEEP),
    "subscripts": (kernel("    x = n" + "[0]" * N + "\n"), "6:9: error: " + DEEP),
    "call_chain": (kernel("    x = n" + "()" * N + "\n"), "6:9: error: " + DEEP),
    "elif": (kernel("    x = 0\n    if n == 0:\n        x = 1\n" +
                    "".join("    elif n == %d:\n        x = %d\n" % (i, i) for i in range(1, 10000))),
             "2004:9: error: " + DEEP),
    "if_blocks": (nested_blocks("if n > 0:"), "106:104: error: " + INDENT),
    "for_blocks": (nested_blocks("for i in range(n):"), "106:104: error: " + INDENT),
    "lambda_module": ("f = " + "lambda: " * 150000 + "1\n" + HEAD + "    tl.store(x_ptr, n)\n",
                      "1:8005: error: " + DEEP),
    "helpers": (helpers(), "10:107: error: " + DEEP),
    "many_kernels": (many_kernels(), ": error: several kernels (k0, k1, k2, ...", 1),
    "helper_tree": (helper_tree(), None, 0),
}


def matches(line, want):
    return line.startswith(want[:-3]) if want.endswith("...") else line == want


def run(tilec, outdir, name):
    source, expected, status = (CASES[name] + (1,))[:3]
    path = os.path.join(outdir, name + ".tl")
    with open(path, "w") as f:
        f.write(source)
    argv = [tilec, path, "--signature", "*i32" if name == "many_kernels" else "*i32,i32",
            "--emit=llir", "-o", os.devnull]
    p = subprocess.run(argv, capture_output=True, text=True)
    lines = p.stderr.splitlines()
    first = lines[0] if lines else None
    want = None if expected is None else (path + ("" if expected.startswith(":") else ":") + expected)
    if p.returncode == status and (first == want or (want and first and matches(first, want))):
        return True
    print("FAIL %s: exit %d (want %d); first line of stderr:\n  %s\nwant:\n  %s"
          % (name, p.returncode, status, first[:300] if first else "(none)", want or "(none)"))
    return False


SEED_PATTERNS = {"pow": "n**", "and": "n and ", "compare": "n < ", "plus": "n + ", "minus": "-",
                 "not": "not ", "parens": "(", "calls": "abs(", "ifexp": "n if n else ",
                 "attributes": ".a", "subscripts": "[0]", "lambda": "lambda: "}


def write_seeds(outdir):
    """One kernel per pattern, repeated to fill the fuzzer's 4096-byte inputs:
    deep enough to reach the nesting limit where the pattern is one byte."""
    os.makedirs(outdir, exist_ok=True)
    for name, piece in SEED_PATTERNS.items():
        n = (3900 - len(HEAD)) // len(piece)
        expr = piece * n + "n"
        if piece in ("(", "abs("):
            expr += ")" * n
        elif piece == ".a" or piece == "[0]":
            expr = "n" + piece * n
        with open(os.path.join(outdir, "deep_%s.tl" % name), "w") as f:
            f.write(kernel("    x = " + expr + "\n"))
    return 0


def main():
    if sys.argv[1] == "--seeds":
        return write_seeds(sys.argv[2])
    tilec, outdir, names = sys.argv[1], sys.argv[2], sys.argv[3:] or list(CASES)
    os.makedirs(outdir, exist_ok=True)
    failed = [n for n in names if not run(tilec, outdir, n)]
    print("%d of %d hostile frontend inputs handled" % (len(names) - len(failed), len(names)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
