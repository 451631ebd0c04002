"""References for run_random.tl: Philox 4x32 with Triton's constants and its word-to-float
mappings, written from the algorithm (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3")
in plain Python.

  random_ref.py check W I U N F C SEED COUNT
checks every output of run_random.tl for offsets 0 .. COUNT-1 and prints "ok COUNT" or the first
mismatches.  Words and uniform floats must match bit for bit; normals within 2e-6 (libm's log, sin
and cos against Python's, both correctly rounded or nearly).

  random_ref.py check64 W H U SEED COUNT
checks run_philox64.tl's outputs (Philox 4x64, 64-bit high products, uniform floats) the same way.
"""
import math
import struct
import sys

from npy import load

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1


def philox(seed, c, rounds):
    k0, k1 = seed & M32, (seed >> 32) & M32
    c0, c1, c2, c3 = (x & M32 for x in c)
    for _ in range(rounds):
        pa, pb = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (pb >> 32) ^ c1 ^ k0, pb & M32, (pa >> 32) ^ c3 ^ k1, pa & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return [c0, c1, c2, c3]


def philox64(k0, k1, c, rounds):
    """Philox 4x64: the round multipliers and the Weyl key steps of Random123's philox4x64."""
    c0, c1, c2, c3 = (x & M64 for x in c)
    k0, k1 = k0 & M64, k1 & M64
    for _ in range(rounds):
        pa, pb = 0xD2E7470EE14C6C93 * c0, 0xCA5A826395121157 * c2
        c0, c1, c2, c3 = (pb >> 64) ^ c1 ^ k0, pb & M64, (pa >> 64) ^ c3 ^ k1, pa & M64
        k0, k1 = (k0 + 0x9E3779B97F4A7C15) & M64, (k1 + 0xBB67AE8584CAA73B) & M64
    return [c0, c1, c2, c3]


# Random123's known-answer vector for philox4x64 with 10 rounds on zero counters and key (kat_vectors).
PHILOX64_ZERO = [0x16554D9ECA36314C, 0xDB20FE9D672D0FDC, 0xD7E772CEE186176B, 0x7E68B68AEC7BA23B]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def int_to_f32(v):
    # Rounded once to 24 bits (nearest, ties to even): float(v) first would round twice.
    shift = max(v.bit_length() - 24, 0)
    q, r = v >> shift, v & ((1 << shift) - 1)
    half = 1 << shift >> 1
    if shift and (r > half or (r == half and q & 1)):
        q += 1
    return f32(float(q << shift))


def signed(v, bits):
    return v - (1 << bits) if v >> (bits - 1) else v


def uniform(word, bits=32):
    v = signed(word, bits)
    v = -v - 1 if v < 0 else v
    return f32(int_to_f32(v) * f32(4.6566127342e-10 if bits == 32 else 1.0842020432385337e-19))


def normals(u1, u2):
    u1 = max(f32(1.0e-7), u1)
    th = f32(6.283185307179586 * u2)
    r = math.sqrt(-2.0 * math.log(u1))
    return r * math.cos(th), r * math.sin(th)


def i32(w):
    return signed(w & M32, 32)


def main(argv):
    w, i, u, n, f, c = (load(p) for p in argv[2:8])
    seed, count = int(argv[8]), int(argv[9])
    bad = []
    for k in range(count):
        want_w = [i32(x) for x in philox(seed, [k, 3 * k, 7, -k], 10)]
        big = k * 1000003 + (k << 33)
        words = philox(seed, [big, big >> 32, 0, 0], 7)
        want_i = [i32(x) for x in words]
        base = philox(seed, [k, 0, 0, 0], 10)
        want_u = [uniform(x) for x in base] + [uniform(base[0])]
        n1, n2 = normals(want_u[0], want_u[1])
        n3, n4 = normals(want_u[2], want_u[3])
        want_n = [n1, n2, n3, n4, n1]
        want_f = uniform((k * 0x7E3779B97F4A7C15) & ((1 << 64) - 1), 64)
        want_c = [i32(philox(-3, [k, 0, 0, 0], 10)[0]), i32(philox(5, [1, k, 2, 3], 10)[2]),
                  i32(philox(seed, [3000000000, 0, 0, 0], 10)[1])]
        got_n = n[5 * k:5 * k + 5]
        if (w[4 * k:4 * k + 4] != want_w or i[4 * k:4 * k + 4] != want_i or u[5 * k:5 * k + 5] != want_u
                or any(abs(g - e) > 2e-6 * (1 + abs(e)) for g, e in zip(got_n, want_n))
                or f[k] != want_f or c[3 * k:3 * k + 3] != want_c):
            bad.append(k)
    for name, values, per in (("u", u, 5), ("n", n, 5), ("f", f, 1)):
        if any(v == v for v in values[per * count:]):
            bad.append("%s past the end was written" % name)
    print("ok %d" % count if not bad else "bad %s" % bad[:8])


def main64(argv):
    w, h, u = (load(p) for p in argv[2:5])
    seed, count = int(argv[5]), int(argv[6])
    bad = [] if philox64(0, 0, [0, 0, 0, 0], 10) == PHILOX64_ZERO else ["the reference misses Random123's answer"]
    for k in range(count):
        counter = (k * 0x9E3779B97F4A7C1 + (k << 45)) & M64
        key = k << 40
        want_w = philox64(seed, 0, [counter, 3 * counter, -counter, counter ^ 7], 10)
        want_w += philox64(key ^ 0x5555, 0, [counter, 0, key, 1], 7)
        want_h = counter * ((key + 0x7FFFFFFFFFFFFFFF) & M64) >> 64
        want_u = uniform(philox64(seed, 0, [counter, 0, 0, 0], 10)[0], 64)
        if w[8 * k:8 * k + 8] != want_w or h[k] != want_h or u[k] != want_u:
            bad.append(k)
    if any(v == v for v in u[count:]):
        bad.append("u past the end was written")
    print("ok %d" % count if not bad else "bad %s" % bad[:8])


if __name__ == "__main__":
    main64(sys.argv) if sys.argv[1] == "check64" else main(sys.argv)
