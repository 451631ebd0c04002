"""Reference for run_libdevice_rn.tl: fp32 results rounded once to nearest (even).

  rn_ref.py X Y Z OUT N    OUT holds 7 sections of N: x + y, x - y, x * y, x / y, 1 / y, sqrt(|x|),
                           fma(x, y, z); prints "ok N" or the first mismatches
Add, subtract, multiply, divide and sqrt of fp32 values computed in double and rounded to fp32 round
correctly (double has more than 2 * 24 + 2 bits); fma is computed exactly with fractions.
"""
import math
import struct
import sys
from fractions import Fraction

from npy import load


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def round_f32(q):
    # Nearest fp32 (ties to even) of the exact rational q, for normal-range values.
    if q == 0:
        return 0.0
    e = math.floor(math.log2(abs(q)))
    while abs(q) >= Fraction(2) ** (e + 1):
        e += 1
    while abs(q) < Fraction(2) ** e:
        e -= 1
    scaled = q / Fraction(2) ** (e - 23)
    n = math.floor(scaled)
    rest = scaled - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2):
        n += 1
    return float(n * Fraction(2) ** (e - 23))


def main(argv):
    x, y, z, out = (load(p) for p in argv[1:5])
    n = int(argv[5])
    bad = []
    for k in range(n):
        a, b, c = x[k], y[k], z[k]
        want = [f32(a + b), f32(a - b), f32(a * b), f32(a / b), f32(1 / b), f32(math.sqrt(abs(a))),
                round_f32(Fraction(a) * Fraction(b) + Fraction(c))]
        for s, w in enumerate(want):
            if out[s * n + k] != w:
                bad.append((s, k, out[s * n + k], w))
    print("ok %d" % n if not bad else "bad %s" % bad[:5])


if __name__ == "__main__":
    main(sys.argv)
