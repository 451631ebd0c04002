"""Inputs and reference for run_propagate_nan.tl (fp32, no numpy).

  nan_ref.py make PATH N SEED     N fp32 values: a third NaN, then infinities, signed zeros, halves, and
                                  uniform values in [-2, 2)
  nan_ref.py check X Y OUT N      OUT holds 7 sections of N: maximum and minimum with PropagateNan.ALL
                                  (NaN if either operand is, -0 < +0), maximum and minimum with NONE
                                  (the other operand when one is NaN), clamp(x, -0.5, 0.5) with ALL and
                                  with NONE, sqrt_rn(|x|) bit for bit; prints "ok N" or the first mismatches
"""
import math
import random
import struct
import sys

from npy import load, save


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def make(path, n, seed):
    rng = random.Random(seed)
    edges = [math.inf, -math.inf, 0.0, -0.0, 0.5, -0.5]
    values = [math.nan if rng.random() < 0.3 else rng.choice(edges) if rng.random() < 0.3 else rng.uniform(-2, 2)
              for _ in range(n)]
    save(path, values, "f4", (n,))


def extremum(x, y, is_max, propagate):
    if math.isnan(x) or math.isnan(y):
        return math.nan if propagate or (math.isnan(x) and math.isnan(y)) else (y if math.isnan(x) else x)
    if x == 0 and y == 0 and propagate:
        return (max if is_max else min)(x, y, key=lambda v: math.copysign(1, v))
    return max(x, y) if is_max else min(x, y)


def same(a, b, signed_zero):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and (not signed_zero or math.copysign(1, a) == math.copysign(1, b))


def check(x, y, out, n):
    bad = []
    for k in range(n):
        a, b = x[k], y[k]
        want = [(extremum(a, b, True, True), True), (extremum(a, b, False, True), True),
                (extremum(a, b, True, False), False), (extremum(a, b, False, False), False),
                (extremum(extremum(a, -0.5, True, True), 0.5, False, True), True),
                (extremum(extremum(a, -0.5, True, False), 0.5, False, False), False),
                (f32(math.sqrt(abs(a))) if not math.isnan(a) else math.nan, True)]
        for s, (w, signed_zero) in enumerate(want):
            if not same(out[s * n + k], w, signed_zero):
                bad.append((s, k, a, b, out[s * n + k], w))
    print("ok %d" % n if not bad else "bad %s" % bad[:5])


def main(argv):
    if argv[1] == "make":
        make(argv[2], int(argv[3]), int(argv[4]))
    else:
        x, y, out = load(argv[2]), load(argv[3]), load(argv[4])
        check(x, y, out, int(argv[5]))


if __name__ == "__main__":
    main(sys.argv)
