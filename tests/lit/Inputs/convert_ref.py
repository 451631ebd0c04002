"""Inputs, kernel and references for run_libdevice_convert.tl: libdevice's conversions (every
`SRC2DST_MODE`, `*_as_*`, `double2hiint`, `double2loint`, `hiloint2double`) against exact rationals.

  convert_ref.py make DIR N     write DIR/f4.npy, f8.npy, i4.npy, u4.npy, i8.npy, u8.npy, lo.npy: edge values
                                (ties, NaN, infinities, the integer limits and just past them) first, then random
  convert_ref.py check DIR N    check DIR/oi4.npy, oi8.npy, of4.npy, of8.npy (the sections of OUTPUTS below);
                                print "ok N" or the first mismatches
  convert_ref.py kernel         print the kernel's stores (how run_libdevice_convert.tl was written)
"""
import math
import os
import random
import struct
import sys
from fractions import Fraction

from npy import load, save
from round_ref import exponent

MODES = ("rn", "rz", "rd", "ru")
# each output buffer (its element type) and the functions stored in it, a section each, with their input
OUTPUTS = {
    "oi4": [("float2int_" + m, "f4") for m in MODES] + [("float2uint_" + m, "f4") for m in MODES]
    + [("double2int_" + m, "f8") for m in MODES] + [("double2uint_" + m, "f8") for m in MODES]
    + [("double2hiint", "f8"), ("double2loint", "f8"), ("float_as_int", "f4"), ("float_as_uint", "f4")],
    "oi8": [("float2ll_" + m, "f4") for m in MODES] + [("float2ull_" + m, "f4") for m in MODES]
    + [("double2ll_" + m, "f8") for m in MODES] + [("double2ull_" + m, "f8") for m in MODES]
    + [("double_as_longlong", "f8")],
    "of4": [("double2float_" + m, "f8") for m in MODES] + [("int2float_" + m, "i4") for m in MODES]
    + [("uint2float_" + m, "u4") for m in MODES] + [("ll2float_" + m, "i8") for m in MODES]
    + [("ull2float_" + m, "u8") for m in MODES] + [("int_as_float", "i4"), ("uint_as_float", "u4")],
    "of8": [("int2double_rn", "i4"), ("uint2double_rn", "u4")] + [("ll2double_" + m, "i8") for m in MODES]
    + [("ull2double_" + m, "u8") for m in MODES] + [("longlong_as_double", "i8"), ("hiloint2double", "i4")],
}
INF, NAN = math.inf, math.nan
FLOAT_EDGES = [NAN, INF, -INF, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -2.5, -1.0, 2.0 ** 31, 2.0 ** 31 - 0.5, -2.0 ** 31 - 1,
               2.0 ** 32, 2.0 ** 32 + 1, 2.0 ** 63, 2.0 ** 64, -2.0 ** 63, 1e30, 3e9, -3e9, 16777217.0, 0.9999]
INT_EDGES = [0, -1, 1, 2 ** 24 + 1, 2 ** 53 + 1, -2 ** 31, 2 ** 31 - 1, 2 ** 63 - 1, -2 ** 63, 2 ** 32 - 1,
             0x7f800001, 2 ** 62 + 3, 33554435]
FORMATS = {"float": (24, -126, 3.4028234663852886e38), "double": (53, -1022, sys.float_info.max)}


def wrap(v, bits, signed):
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def f32(v):
    if math.isfinite(v) and abs(v) >= 3.4028235677973366e38:
        return math.copysign(INF, v)
    return struct.unpack("<f", struct.pack("<f", v))[0]


def bits_as(v, src, dst):
    """v's bits, packed as the struct format src, read back as dst."""
    return struct.unpack("<" + dst, struct.pack("<" + src, v))[0]


def integral(q, mode):
    if mode == "rz":
        return math.trunc(q)
    if mode == "rd":
        return math.floor(q)
    if mode == "ru":
        return math.ceil(q)
    return round(q)  # ties to even


def to_int(x, mode, bits, signed, from_double):
    """cvt to an integer: saturating; the result's bits as the signed type of that width.  NaN as an H200
    converts it: 0 from fp32 into 32 bits, the sign bit alone from fp64 into 32 and from either into 64."""
    if math.isnan(x):
        return -2 ** (bits - 1) if bits == 64 or from_double else 0
    lo, hi = (-2 ** (bits - 1), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    r = hi if x == INF else lo if x == -INF else max(lo, min(hi, integral(Fraction(x), mode)))
    return wrap(r, bits, True)


def to_float(q, fmt, mode):
    """The rational q in the format ("float", "double") rounded by mode; infinities and NaN pass."""
    if isinstance(q, float) and not math.isfinite(q):
        return q
    q = Fraction(q)
    if q == 0:
        return 0.0
    bits, emin, largest = FORMATS[fmt]
    a, negative = abs(q), q < 0
    quantum = Fraction(2) ** (max(exponent(a), emin) - bits + 1)
    n = a / quantum
    if mode == "rn":
        m = round(n)
        up = False
    else:
        up = mode == "ru" and not negative or mode == "rd" and negative
        m = math.ceil(n) if up else math.floor(n)
    r = m * quantum
    value = (INF if up or mode == "rn" else largest) if r > Fraction(largest) else float(r)
    return -value if negative else value


def reference(name, v, lo):
    if name == "double2hiint":
        return wrap(bits_as(v, "d", "q") >> 32, 32, True)
    if name == "double2loint":
        return wrap(bits_as(v, "d", "q"), 32, True)
    if name in ("float_as_int", "float_as_uint"):
        return bits_as(v, "f", "i")
    if name == "double_as_longlong":
        return bits_as(v, "d", "q")
    if name in ("int_as_float", "uint_as_float"):
        return bits_as(v & 0xffffffff, "I", "f")
    if name == "longlong_as_double":
        return bits_as(v, "q", "d")
    if name == "hiloint2double":
        return bits_as(((v & 0xffffffff) << 32) | (lo & 0xffffffff), "Q", "d")
    src, rest = name.split("2")
    dst, mode = rest.split("_")
    if dst in ("int", "uint", "ll", "ull"):
        return to_int(v, mode, 32 if dst in ("int", "uint") else 64, dst in ("int", "ll"), src == "double")
    return to_float(v, dst, mode)


def make(path, n):
    rng = random.Random(8)
    columns = {
        "f4": [f32(FLOAT_EDGES[k]) if k < len(FLOAT_EDGES) else f32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-10, 70))
               for k in range(n)],
        "f8": [FLOAT_EDGES[k] if k < len(FLOAT_EDGES) else rng.uniform(-1, 1) * 2.0 ** rng.randint(-10, 70)
               for k in range(n)],
    }
    for code, bits, signed in (("i4", 32, True), ("u4", 32, False), ("i8", 64, True), ("u8", 64, False), ("lo", 32, True)):
        columns[code] = [wrap(INT_EDGES[k] if k < len(INT_EDGES) else rng.getrandbits(bits) >> rng.randint(0, bits - 1),
                              bits, signed) for k in range(n)]
    for code, values in columns.items():
        save(os.path.join(path, code + ".npy"), values, "i4" if code == "lo" else code, [n])


def same(got, want):
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return got == want


def check(path, n):
    inputs = {code: load(os.path.join(path, code + ".npy")) for code in ("f4", "f8", "i4", "u4", "i8", "u8", "lo")}
    bad = []
    for out, sections in OUTPUTS.items():
        got = load(os.path.join(path, out + ".npy"))
        for s, (name, src) in enumerate(sections):
            for k in range(n):
                want = reference(name, inputs[src][k], inputs["lo"][k])
                if not same(got[s * n + k], want):
                    bad.append((out, name, k, inputs[src][k], got[s * n + k], want))
    print("ok %d" % n if not bad else "bad %d: %s" % (len(bad), bad[:6]))


def kernel():
    for out, sections in OUTPUTS.items():
        for s, (name, src) in enumerate(sections):
            args = "i4, lo" if name == "hiloint2double" else src
            print("    tl.store(%s_ptr + %d * N + offs, libdevice.%s(%s), mask=m)" % (out, s, name, args))


if __name__ == "__main__":
    if sys.argv[1] == "kernel":
        kernel()
    elif sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]))
    else:
        check(sys.argv[2], int(sys.argv[3]))
