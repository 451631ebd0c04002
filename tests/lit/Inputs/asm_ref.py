"""Reference for run_inline_asm.tl's kernel (run on the GPU by tests/gpu/inline_asm.sh).

  asm_ref.py X Y OUT N    OUT[k] = shf.l.wrap.b32(x, y, 5) = (y << 5 | x >> 27) mod 2^32 and
                          OUT[N + k] = the carry of x + y as unsigned 32-bit; prints "ok N" or mismatches
"""
import sys

from npy import load


def main(argv):
    x, y, out = load(argv[1]), load(argv[2]), load(argv[3])
    n = int(argv[4])
    bad = []
    for k in range(n):
        a, b = x[k] & 0xFFFFFFFF, y[k] & 0xFFFFFFFF
        rotated = ((b << 5) | (a >> 27)) & 0xFFFFFFFF
        rotated -= (rotated >> 31) << 32
        if out[k] != rotated or out[n + k] != (a + b) >> 32:
            bad.append(k)
    print("ok %d" % n if not bad else "bad %s" % bad[:8])


if __name__ == "__main__":
    main(sys.argv)
