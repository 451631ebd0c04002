"""Inputs and references for run_libdevice_special.tl: libdevice's special functions against Python's math
module (no numpy or scipy), by methods other than tile's (src/support/special_math.c).

  special_ref.py make DIR CODE N       write DIR/a.npy (13 sections of N inputs: edge values first, then
                                       random ones) and DIR/b.npy (3 sections, for the fp32-only functions);
                                       CODE f4 or f8
  special_ref.py check DIR CODE N      check DIR/out.npy (18 sections), DIR/ints.npy (2, i64) and, for f4,
                                       DIR/fast.npy (12) and DIR/finite.npy (i32); print "ok N" or the mismatches
"""
import math
import os
import random
import struct
import sys
from fractions import Fraction

from npy import load, save

INF, NAN = math.inf, math.nan

# Edge values of each input section, then random values from the section's range (uniform, or
# log-uniform where the range is ("log", lo, hi)).
SECTIONS = [
    ([0.0, -0.0, 1.0, -1.0, NAN, INF, 2.0, -1.5, 1e-300, 1e-30, 0.5, -0.5, 0.9999999, 1 - 2 ** -53], (-1, 1)),
    ([0.0, 2.0, 1.0, NAN, -1.0, 3.0, 5e-324, 1e-300, 1e-40, 1.9999999, 0.5, 1.5], ("log", 1e-30, 2)),
    ([0.0, -0.0, INF, -INF, NAN, 25.0, 24.999, 26.7, -26.0, -30.0, 1e300, 1e-300], (-10, 30)),
    ([0.0, 1.0, 0.5, NAN, -0.1, 1.1, 1e-300, 1e-30, 0.975], (0, 1)),
    ([0.0, -0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, -3.0, -0.5, 1e17, 1e9, INF, -INF, NAN, 1e-300, 2.75, -2.75],
     (-100, 100)),
    ([0.0, -0.0, INF, -INF, NAN, 1e-30, 1e5, 2.404825557695773], (-30, 30)),
    ([0.0, -1.0, INF, NAN, 1e-3, 0.8935769662791675], (0.1, 30)),
    ([0.0, -0.0, INF, -INF, NAN, 80.0, -80.0, 700.0], (-50, 50)),
    ([0.0, -0.0, INF, -INF, NAN, 1e300, 1e30, 1e-300, 3.0], (-10, 10)),
    ([0.0, 0.0, NAN, 1.0, INF, 1e300, 1e30, 1e-300, 4.0], (-10, 10)),
    ([0.0, 0.0, 1.0, NAN, 2.0, 1e300, 1e30, 1e-300, 12.0], (-10, 10)),
    ([0.0, -0.0, 1.0, 1.0, NAN, 1e300, 1e30, 1e-300, 84.0], (-10, 10)),
    ([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 1e30, -1e30, NAN, INF, -INF, 2.0 ** 62, 2.0 ** 63,
      -2.0 ** 63, 4503599627370497.0, 8388609.0], (-1e6, 1e6)),
]
FAST = [
    ([0.0, -0.0, 1.0, 0.5, 1.5, -1.0, INF, -INF, NAN, 1e-30], (-10, 10)),
    ([1.0, 2.0, 4.0, 0.25, INF, 1e-30, 1e30], (0.01, 100)),
    ([1.0, 0.5, -2.0, 3.0, 2.0, 1.0, 1.0], (-3, 3)),
]


def f32(v):
    if math.isfinite(v) and abs(v) >= 3.4028235677973366e38:
        return math.copysign(INF, v)
    return struct.unpack("<f", struct.pack("<f", v))[0]


def make_sections(sections, n, narrow, rng):
    values = []
    for edges, span in sections:
        for k in range(n):
            if k < len(edges):
                v = edges[k]
            elif span[0] == "log":
                v = math.exp(rng.uniform(math.log(span[1]), math.log(span[2])))
            else:
                v = rng.uniform(span[0], span[1])
            if k >= len(edges) and k % 7 == 0:
                v = round(v * 2) / 2  # integers and halves: exact cases of sinpi, llrint ties
            values.append(f32(v) if narrow else v)
    return values


# ---- references ----

def solve_decreasing(f, target, lo, hi):
    """x in [lo, hi] with f(x) = target, f decreasing, by bisection down to adjacent doubles."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def erfinv_small(t):
    """erf(x) = t for 0 <= t <= 0.5; below 1e-8 the series' next term is under 1e-17 relative."""
    if t < 1e-8:
        return t * math.sqrt(math.pi) / 2 * (1 + math.pi * t * t / 12)
    return solve_decreasing(lambda x: -math.erf(x), -t, 0.0, 1.0)


def log_erfc(x):
    return math.log(erfcx(x)) - x * x  # erfc(x) itself is subnormal past 26.5


def erfcinv(q):
    if math.isnan(q) or q < 0 or q > 2:
        return NAN
    if q == 0:
        return INF
    if q == 2:
        return -INF
    if q > 1:
        return -erfcinv(2 - q)
    if q > 0.5:
        return erfinv_small(1 - q)
    return solve_decreasing(log_erfc, math.log(q), 0.0, 30.0)


def erfinv(p):
    if math.isnan(p) or abs(p) > 1:
        return NAN
    if abs(p) <= 0.5:
        return math.copysign(erfinv_small(abs(p)), p)
    return math.copysign(erfcinv(1 - abs(p)), p)


def erfcx(x):
    if math.isnan(x):
        return x
    if x < -26.7:
        return INF
    if x >= 25:  # the asymptotic series, 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k
        term, total = 1.0, 1.0
        for k in range(1, 12):
            term *= -(2 * k - 1) / (2 * x * x)
            total += term
        return total / (x * math.sqrt(math.pi))
    square = Fraction(x) ** 2  # exp(x^2) from x^2 split exactly into a double and the rest
    s = float(square)
    return math.exp(s) * math.exp(float(square - Fraction(s))) * math.erfc(x)


def sinpi_exact(q, zero_sign):
    """sin(pi q) for the exact rational q, reduced exactly to a quarter period."""
    r = q % 2  # [0, 2)
    sign = 1
    if r >= 1:
        r, sign = r - 1, -1
    if r > Fraction(1, 2):
        r = 1 - r
    v = sign * (math.sin(math.pi * float(r)) if r <= Fraction(1, 4) else math.cos(math.pi * float(Fraction(1, 2) - r)))
    return math.copysign(0.0, zero_sign) if v == 0 else v


def sinpi(x):
    return sinpi_exact(Fraction(x), x) if math.isfinite(x) else NAN


def cospi(x):
    return sinpi_exact(Fraction(x) + Fraction(1, 2), 1.0) if math.isfinite(x) else NAN


def trapezoid(f, m):
    """(1/pi) times the integral of f over [0, pi], f even and 2 pi periodic: spectrally accurate."""
    h = math.pi / m
    return (f(0) / 2 + sum(f(k * h) for k in range(1, m)) + f(math.pi) / 2) * h / math.pi


def bessel_j(n, x):
    if math.isnan(x):
        return x
    if math.isinf(x):
        return 0.0
    return trapezoid(lambda t: math.cos(n * t - x * math.sin(t)), 200 + 2 * int(abs(x)))


def bessel_i(n, x):
    if math.isnan(x):
        return x
    if math.isinf(x) or abs(x) > 713.98:
        return math.copysign(INF, x) if n % 2 else INF
    return trapezoid(lambda t: math.exp(x * math.cos(t)) * math.cos(n * t), 2000)


def saturate_int(x, r):
    """NaN as an H200 converts it into 64 bits: the sign bit alone."""
    return -2 ** 63 if math.isnan(x) else 2 ** 63 - 1 if r >= 2 ** 63 else -2 ** 63 if r < -2 ** 63 else int(r)


def llround(x):
    if not math.isfinite(x):
        return saturate_int(x, x)
    q = Fraction(x)
    return saturate_int(x, math.copysign(math.floor(abs(q) + Fraction(1, 2)), x))


def llrint(x):
    return saturate_int(x, x if not math.isfinite(x) else round(x))


def close(got, want, rtol, atol):
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= atol + rtol * abs(want)


def check(path, code, n):
    a, out, ints = load(os.path.join(path, "a.npy")), load(os.path.join(path, "out.npy")), load(os.path.join(path, "ints.npy"))
    narrow = code == "f4"
    rnd = f32 if narrow else float
    tol = (3e-7, 1e-38) if narrow else (1e-13, 1e-300)
    s = lambda i, k: a[i * n + k]  # noqa: E731
    bad = []

    def want(section, k, value, rtol=tol[0], atol=tol[1]):
        got = out[section * n + k]
        if not close(got, rnd(value), rtol, atol):
            bad.append((section, k, got, value))

    for k in range(n):
        m = k % 6
        want(0, k, erfinv(s(0, k)))
        want(1, k, erfcinv(s(1, k)))
        want(2, k, erfcx(s(2, k)))
        want(3, k, -math.sqrt(2) * erfcinv(2 * s(3, k)) if not math.isnan(s(3, k)) else NAN)
        want(4, k, sinpi(s(4, k)), atol=tol[1])
        want(5, k, cospi(s(4, k)))
        # Bessel functions: absolute error near their zeros, where glibc's relative one is large
        babs = 1e-6 if narrow else 1e-13
        want(6, k, bessel_j(0, s(5, k)), 1e-5 if narrow else 1e-10, babs)
        want(7, k, bessel_j(1, s(5, k)), 1e-5 if narrow else 1e-10, babs)
        want(10, k, bessel_j(m, s(5, k)), 1e-5 if narrow else 1e-10, babs)
        x = s(6, k)
        y0, y1, yn = out[8 * n + k], out[9 * n + k], out[11 * n + k]
        ytol = (1e-4, 1e-5) if narrow else (1e-8, 1e-13)
        if x > 0 and math.isfinite(x):  # the Wronskian, and Y_n from Y_0, Y_1 by recurrence
            w = bessel_j(1, x) * y0 - bessel_j(0, x) * y1
            if not close(w, 2 / (math.pi * x), ytol[0] / 100 if not narrow else ytol[0], 0):
                bad.append(("wronskian", k, w, 2 / (math.pi * x)))
            ys = [y0, y1]
            for j in range(1, m):
                ys.append(2 * j / x * ys[j] - ys[j - 1])
            if not close(yn, ys[m], *ytol):
                bad.append(("yn", k, yn, ys[m]))
        elif x == 0 and not (y0 == -INF and y1 == -INF and yn == -INF):
            bad.append(("y at 0", k, y0, y1))
        elif (x < 0 or math.isnan(x)) and not (math.isnan(y0) and math.isnan(y1) and math.isnan(yn)):
            bad.append(("y outside", k, y0, y1))
        want(12, k, bessel_i(0, s(7, k)), 1e-6 if narrow else 1e-12, 1e-15)
        want(13, k, bessel_i(1, s(7, k)), 1e-6 if narrow else 1e-12, 1e-15)  # I_1(0) by the rule: 1e-16
        v = [s(i, k) for i in (8, 9, 10, 11)]
        want(14, k, math.hypot(*v[:3]))
        want(15, k, 1 / math.hypot(*v[:3]) if math.hypot(*v[:3]) else INF)
        want(16, k, math.hypot(*v))
        want(17, k, 1 / math.hypot(*v) if math.hypot(*v) else INF)
        for section, f in ((0, llrint), (1, llround)):
            if ints[section * n + k] != f(s(12, k)):
                bad.append(("ints", section, k, ints[section * n + k], f(s(12, k))))
    if narrow:
        check_fast(path, n, bad)
    print("ok %d" % n if not bad else "bad %d: %s" % (len(bad), bad[:6]))


def check_fast(path, n, bad):
    b, fast, finite = load(os.path.join(path, "b.npy")), load(os.path.join(path, "fast.npy")), load(os.path.join(path, "finite.npy"))

    def guard(f):
        try:
            return f()
        except (ValueError, OverflowError, ZeroDivisionError):
            return None

    for k in range(n):
        x, p, y = b[k], b[n + k], b[2 * n + k]
        refs = [max(0.0, min(1.0, x)) if not math.isnan(x) else 0.0, guard(lambda: math.sin(x)),
                guard(lambda: math.cos(x)), guard(lambda: math.exp(x)) if not x >= 89 else INF,
                guard(lambda: math.log(p)), guard(lambda: math.log2(p)), guard(lambda: p ** y),
                guard(lambda: x / y), guard(lambda: 1 / math.sqrt(p)), guard(lambda: 10.0 ** x) if not x >= 39 else INF,
                guard(lambda: math.log10(p)), guard(lambda: math.tan(x))]
        for section, r in enumerate(refs):
            if r is None:
                continue
            if not close(fast[section * n + k], f32(r), 2.4e-7, 1e-38):
                bad.append(("fast", section, k, fast[section * n + k], r))
        if finite[k] != int(math.isfinite(x)):
            bad.append(("finitef", k, finite[k], x))


def main(argv):
    what, path, code, n = argv[1], argv[2], argv[3], int(argv[4])
    if what == "make":
        rng = random.Random(19)
        save(os.path.join(path, "a.npy"), make_sections(SECTIONS, n, code == "f4", rng), code, [13 * n])
        save(os.path.join(path, "b.npy"), make_sections(FAST, n, True, rng), "f4", [3 * n])
    else:
        check(path, code, n)


if __name__ == "__main__":
    main(sys.argv)
