"""Inputs and references for run_libdevice_int.tl: libdevice's integer functions, in Python's integers.

  int_ref.py make DIR N     write DIR/a.npy, DIR/b.npy, DIR/c.npy (i4) and DIR/a64.npy, DIR/b64.npy (i8):
                            edge values (0, -1, 1, the limits, powers of two) first, then random bits
  int_ref.py check DIR N    check DIR/o32.npy (i32 sections), DIR/ou.npy (u32), DIR/o64.npy (i64) and
                            DIR/ou64.npy (u64); print "ok N" or the first mismatches
"""
import os
import random
import sys

from npy import load, save

EDGES = [0, -1, 1, -2 ** 31, 2 ** 31 - 1, 2 ** 23, -2 ** 23, 2 ** 24 - 1, 0x80, 0x7fffff, -0x800000, 12345, -7]
EDGES64 = [0, -1, 1, -2 ** 63, 2 ** 63 - 1, 2 ** 32, -2 ** 32, 2 ** 31, 0xffffffff, 1 << 62, -12345678901]


def wrap(v, bits, signed=True):
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def column(edges, n, bits, rng, shift):
    return [wrap(edges[(k + shift) % len(edges)], bits) if k < 2 * len(edges) else wrap(rng.getrandbits(bits), bits)
            for k in range(n)]


def clz(v, bits):
    v &= (1 << bits) - 1
    return bits - v.bit_length()


def ffs(v, bits):
    v &= (1 << bits) - 1
    return (v & -v).bit_length()


def brev(v, bits):
    return wrap(int(format(v & ((1 << bits) - 1), "0%db" % bits)[::-1], 2), bits)


def sext24(v):
    return wrap(v, 24)


def byte_perm(x, y, s):
    data = ((y & 0xffffffff) << 32) | (x & 0xffffffff)
    return wrap(sum(((data >> 8 * ((s >> 4 * i) & 7)) & 0xff) << 8 * i for i in range(4)), 32)


def references(a, b, c, a64, b64):
    au, bu, cu = a & 0xffffffff, b & 0xffffffff, c & 0xffffffff
    o32 = [clz(a, 32), bin(a & 0xffffffff).count("1"), ffs(a, 32), brev(a, 32), wrap((a * b) >> 32, 32),
           wrap(sext24(a) * sext24(b), 32), (a + b) >> 1, (a + b + 1) >> 1, wrap(abs(a - b) + cu, 32),
           byte_perm(a, b, c), clz(a64, 64), bin(a64 & (2 ** 64 - 1)).count("1"), ffs(a64, 64), wrap(abs(a), 32)]
    ou = [(au * bu) >> 32, ((au & 0xffffff) * (bu & 0xffffff)) & 0xffffffff, (au + bu) >> 1, (au + bu + 1) >> 1,
          (abs(au - bu) + cu) & 0xffffffff]
    o64 = [brev(a64, 64), (a64 * b64) >> 64, wrap(abs(a64), 64)]
    ou64 = [((a64 % 2 ** 64) * (b64 % 2 ** 64)) >> 64]
    return o32, ou, o64, ou64


def main(argv):
    what, path, n = argv[1], argv[2], int(argv[3])
    if what == "make":
        rng = random.Random(6)
        for name, shift in (("a", 0), ("b", 5), ("c", 3)):
            save(os.path.join(path, name + ".npy"), column(EDGES, n, 32, rng, shift), "i4", [n])
        for name, shift in (("a64", 0), ("b64", 4)):
            save(os.path.join(path, name + ".npy"), column(EDGES64, n, 64, rng, shift), "i8", [n])
        return
    a, b, c, a64, b64 = (load(os.path.join(path, f + ".npy")) for f in ("a", "b", "c", "a64", "b64"))
    outs = [load(os.path.join(path, f + ".npy")) for f in ("o32", "ou", "o64", "ou64")]
    bad = []
    for k in range(n):
        for which, (want, got) in enumerate(zip(references(a[k], b[k], c[k], a64[k], b64[k]), outs)):
            for section, w in enumerate(want):
                if got[section * n + k] != w:
                    bad.append((which, section, k, got[section * n + k], w))
    print("ok %d" % n if not bad else "bad %d: %s" % (len(bad), bad[:6]))


if __name__ == "__main__":
    main(sys.argv)
