"""Inputs and references for run_libdevice_round.tl: libdevice's directed rounding (add, sub, mul, div,
fma, rcp, sqrt; _rz, _rd, _ru), conversions (double2float_rn, float2int_rn, int2float_rn, float_as_int, int_as_float) and
rcp64h, against exact rational arithmetic (fractions) rounded by hand.

  round_ref.py make DIR N     write DIR/x4.npy, y4.npy, z4.npy (f4), x8.npy, y8.npy, z8.npy (f8), i.npy (i4):
                              edge values (overflow, subnormal results, ties) first, then random ones
  round_ref.py check DIR N    check DIR/o4.npy (22 sections fp32, the 7th unused), o8.npy (22 fp64), c4.npy (3 fp32), ci.npy
                              (2 i32); print "ok N" or the first mismatches
"""
import math
import os
import random
import struct
import sys
from fractions import Fraction

from npy import load, save

FLT_MAX = 3.4028234663852886e38
# fp32 and fp64: precision in bits, the smallest normal exponent, the largest finite value
FORMATS = {4: (24, -126, FLT_MAX), 8: (53, -1022, sys.float_info.max)}
EDGES_X = [FLT_MAX, -FLT_MAX, 1e-38, 1.0, 3.0, -3.0, 1.5, 0.1, 2.0 ** -149, 7.0, -1.0]
EDGES_Y = [0.5, 0.5, 3.0, 3.0, 7.0, 7.0, 1e30, -0.1, 0.25, 1e-30, 3.0]
EDGES_Z = [FLT_MAX, -FLT_MAX, -1e-38, 1.0, -1e-8, 1e-8, 0.0, 1e30, 0.0, -2.0, 1e-45]


def f32(v):
    if math.isfinite(v) and abs(v) >= 3.4028235677973366e38:
        return math.copysign(math.inf, v)
    return struct.unpack("<f", struct.pack("<f", v))[0]


def exponent(a):
    """floor(log2(a)) of the positive rational a."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def round_directed(q, fmt, mode):
    """q rounded toward zero ("rz"), down ("rd") or up ("ru") in the format (fp32: 4, fp64: 8)."""
    if q == 0:
        return 0.0
    bits, emin, largest = FORMATS[fmt]
    a, negative = abs(q), q < 0
    quantum = Fraction(2) ** (max(exponent(a), emin) - bits + 1)
    up = mode == "ru" and not negative or mode == "rd" and negative  # the magnitude rounds up
    m = math.ceil(a / quantum) if up else math.floor(a / quantum)
    r = m * quantum
    value = (math.inf if up else largest) if r > Fraction(largest) else float(r)
    return -value if negative else value


def sqrt_directed(x, fmt, mode):
    """sqrt(x) rounded toward zero, down or up: floor(sqrt(a) / q) is isqrt(floor(a / q^2)) exactly."""
    if x == 0:
        return x
    bits, emin, _ = FORMATS[fmt]
    a = Fraction(x)
    quantum = Fraction(2) ** (max(exponent(a) // 2, emin) - bits + 1)
    m = math.isqrt(math.floor(a / quantum ** 2))
    down = m * quantum
    return float(down if mode != "ru" or down * down == a else down + quantum)


def rounded_int(x):
    if math.isnan(x):
        return 0
    return max(-2 ** 31, min(2 ** 31 - 1, round(x))) if math.isfinite(x) else (2 ** 31 - 1 if x > 0 else -2 ** 31)


def column(edges, n, rng, lo, hi, narrow):
    values = [edges[k] if k < len(edges) else rng.uniform(lo, hi) * 2.0 ** rng.randint(-20, 20) for k in range(n)]
    return [f32(v) for v in values] if narrow else values


def main(argv):
    what, path, n = argv[1], argv[2], int(argv[3])
    p = lambda name: os.path.join(path, name + ".npy")  # noqa: E731
    if what == "make":
        rng = random.Random(7)
        for fmt in (4, 8):
            for name, edges in (("x", EDGES_X), ("y", EDGES_Y), ("z", EDGES_Z)):
                save(p(name + str(fmt)), column(edges, n, rng, -4, 4, fmt == 4), "f%d" % fmt, [n])
        ints = [0, -1, 1, 2 ** 31 - 1, -2 ** 31, 2 ** 24 + 1, 0x7f800000, 0x3f800000, 16777217]
        save(p("i"), [ints[k] if k < len(ints) else rng.randrange(-2 ** 31, 2 ** 31) for k in range(n)], "i4", [n])
        return
    bad = []

    def want(out, section, k, value, got_rel=0.0):
        got = out[section * n + k]
        same = (math.isnan(got) and math.isnan(value)) or got == value
        if not same and not (got_rel and abs(got - value) <= got_rel * abs(value)):
            bad.append((section, k, got, value))

    i = load(p("i"))
    c4, ci = load(p("c4")), load(p("ci"))
    for fmt in (4, 8):
        x, y, z, out = load(p("x%d" % fmt)), load(p("y%d" % fmt)), load(p("z%d" % fmt)), load(p("o%d" % fmt))
        for k in range(n):
            prod = Fraction(x[k]) * Fraction(y[k]) + Fraction(z[k])
            quot = Fraction(x[k]) / Fraction(y[k])
            # sections: fma, div (x3 each), rcp64h, add, sub, mul, rcp, sqrt (x3 each)
            exact = {0: prod, 3: quot, 7: Fraction(x[k]) + Fraction(z[k]), 10: Fraction(x[k]) - Fraction(z[k]),
                     13: Fraction(x[k]) * Fraction(y[k]), 16: 1 / Fraction(y[k])}
            for s, mode in enumerate(("rz", "rd", "ru")):
                for first, q in exact.items():
                    want(out, first + s, k, round_directed(q, fmt, mode))
                want(out, 19 + s, k, sqrt_directed(abs(x[k]), fmt, mode))
            if fmt == 8:
                want(out, 6, k, 1 / x[k] if x[k] else math.copysign(math.inf, x[k]), 2.0 ** -20)
                want(c4, 0, k, f32(x[k]))
            else:
                want(c4, 1, k, f32(float(i[k])))
                bits = struct.unpack("<f", struct.pack("<i", i[k]))[0]
                want(c4, 2, k, bits)
                if ci[k] != rounded_int(x[k]) or ci[n + k] != struct.unpack("<i", struct.pack("<f", x[k]))[0]:
                    bad.append(("ci", k, ci[k], ci[n + k], x[k]))
    print("ok %d" % n if not bad else "bad %d: %s" % (len(bad), bad[:6]))


if __name__ == "__main__":
    main(sys.argv)
