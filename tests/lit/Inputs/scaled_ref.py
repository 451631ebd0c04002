"""Inputs and reference for run_dot_scaled.tl's tl.dot_scaled kernels (no numpy).

  scaled_ref.py make P FMT_A FMT_B M N K PACK SEED [nan]
      writes P.a.npy, P.sa.npy, P.b.npy, P.sb.npy: A (M x K) and B (K x N) in their formats
      (e2m1: uint8, two codes a byte, element 2i in the low nibble, packed along K, or along M / N
      when PACK is 0; e4m3, e5m2: uint8 codes; bf16, fp16: uint16 bits), row-major, and e8m0 scales
      (uint8, M x K/32 and N x K/32) in 124..130 with a few 0s, and with nan a few 0xFF
  scaled_ref.py pairs TILEC KERNEL P
      for each of the 25 pairs of formats: make, tilec run KERNEL's first kernel on 40 x 24 x 160, check
  scaled_ref.py check P C FMT_A FMT_B M N K PACK SCALES [fast]
      checks C (fp32, M x N) against the exact product of the decoded, scaled operands, within
      1e-5 * (1 + sum |a*b|); SCALES is both, lhs, rhs or none (the scales the kernel passed).  With
      a 0xFF scale, its row of A (column of B) is NaN, or with fast infinite (NaN where 0).  Prints "ok N" or mismatches.

The values are chosen so that every step of the emulation is exact (no rounding into bf16 or fp16):
fp8 codes of magnitude at most 64, bf16/fp16 values of 8 significant bits, multiples of 2^-17 below 32.
"""
import math
import random
import struct
import subprocess
import sys

FORMATS = ["e2m1", "e4m3", "e5m2", "bf16", "fp16"]
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def fp8(code, exp_bits):
    man_bits, bias = 7 - exp_bits, (1 << (exp_bits - 1)) - 1
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> man_bits) & ((1 << exp_bits) - 1), code & ((1 << man_bits) - 1)
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - man_bits)
    return sign * (1 + m / 2.0 ** man_bits) * 2.0 ** (e - bias)


def decode(fmt, bits):
    if fmt == "e2m1":
        return (-1.0 if bits & 8 else 1.0) * E2M1[bits & 7]
    if fmt == "e4m3":
        return fp8(bits, 4)
    if fmt == "e5m2":
        return fp8(bits, 5)
    if fmt == "bf16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def encode16(fmt, value):
    if fmt == "bf16":
        return struct.unpack("<I", struct.pack("<f", value))[0] >> 16
    return struct.unpack("<H", struct.pack("<e", value))[0]


def random_element(fmt, rng):
    """One element's bits: a code (fp4, fp8) or a uint16 (bf16, fp16), exactly representable."""
    if fmt == "e2m1":
        return rng.randrange(16)
    if fmt in ("e4m3", "e5m2"):
        while True:
            code = rng.randrange(256)
            if abs(decode(fmt, code)) <= 64:  # neither NaN nor infinity
                return code
    value = rng.randrange(256) * 2.0 ** rng.randrange(-17, -2)
    return encode16(fmt, -value if rng.random() < 0.5 else value)


def save(path, values, descr, shape):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    fmt = "B" if descr == "|u1" else "H"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def load(path):
    data = open(path, "rb").read()
    n = struct.unpack("<H", data[8:10])[0]
    header, body = data[10:10 + n].decode(), data[10 + n:]
    fmt = {"|u1": "B", "<u2": "H", "<f4": "f"}[header.split("'")[3]]
    return list(struct.unpack("<%d%s" % (len(body) // struct.calcsize(fmt), fmt), body))


def pack(codes, rows, cols, along_rows):
    """Two fp4 codes a byte: neighbours along the rows (along_rows) or along the columns."""
    if along_rows:
        return [codes[(2 * r) * cols + c] | codes[(2 * r + 1) * cols + c] << 4 for r in range(rows // 2)
                for c in range(cols)]
    return [codes[r * cols + 2 * c] | codes[r * cols + 2 * c + 1] << 4 for r in range(rows) for c in range(cols // 2)]


def unpack(data, rows, cols, along_rows):
    out = [0] * (rows * cols)
    for r in range(rows):
        for c in range(cols):
            i = (r // 2) * cols + c if along_rows else r * (cols // 2) + c // 2
            shift = 4 * (r % 2 if along_rows else c % 2)
            out[r * cols + c] = data[i] >> shift & 15
    return out


def operand_file(fmt, codes, rows, cols, along_rows):
    """(values, descr, shape) of an operand as run_dot_scaled.tl loads it."""
    if fmt == "e2m1":
        shape = [rows // 2, cols] if along_rows else [rows, cols // 2]
        return pack(codes, rows, cols, along_rows), "|u1", shape
    return codes, "|u1" if fmt in ("e4m3", "e5m2") else "<u2", [rows, cols]


def random_scales(n, rng, nan):
    return [255 if nan and rng.random() < 0.02 else 0 if rng.random() < 0.03 else rng.randrange(124, 131)
            for _ in range(n)]


def make(d, fa, fb, m, n, k, packed_k, seed, nan):
    rng = random.Random(seed)
    a = [random_element(fa, rng) for _ in range(m * k)]
    b = [random_element(fb, rng) for _ in range(k * n)]
    save(d + ".a.npy", *operand_file(fa, a, m, k, not packed_k))
    save(d + ".b.npy", *operand_file(fb, b, k, n, packed_k))
    save(d + ".sa.npy", random_scales(m * k // 32, rng, nan), "|u1", [m, k // 32])
    save(d + ".sb.npy", random_scales(n * k // 32, rng, nan), "|u1", [n, k // 32])


def operand(path, fmt, rows, cols, along_rows):
    data = load(path)
    codes = unpack(data, rows, cols, along_rows) if fmt == "e2m1" else data
    return [decode(fmt, c) for c in codes]


def scale_value(s, fast):
    if s == 255:
        return math.inf if fast else math.nan
    return 0.0 if s == 0 else 2.0 ** (s - 127)


def check(d, c_path, fa, fb, m, n, k, packed_k, scales, fast):
    a = operand(d + ".a.npy", fa, m, k, not packed_k)
    b = operand(d + ".b.npy", fb, k, n, packed_k)
    sa, sb = load(d + ".sa.npy"), load(d + ".sb.npy")
    if scales in ("both", "lhs"):
        a = [a[i * k + j] * scale_value(sa[i * (k // 32) + j // 32], fast) for i in range(m) for j in range(k)]
    if scales in ("both", "rhs"):
        b = [b[j * n + i] * scale_value(sb[i * (k // 32) + j // 32], fast) for j in range(k) for i in range(n)]
    c = load(c_path)
    bad = []
    for i in range(m):
        for j in range(n):
            terms = [a[i * k + t] * b[t * n + j] for t in range(k)]
            finite = all(math.isfinite(x) for x in terms)
            ref, got = math.fsum(terms) if finite else sum(terms), c[i * n + j]
            if not finite:  # inf + -inf is NaN, in any order
                ok = got == ref or (math.isnan(ref) and math.isnan(got))
            else:
                ok = abs(got - ref) <= 1e-5 * (1 + math.fsum(abs(x) for x in terms))
            if not ok:
                bad.append((i, j, got, ref))
    print("ok %d" % len(c) if not bad and len(c) == m * n else "mismatch (row, col, got, expected): %s" % bad[:5])


def pairs(tilec, kernel, prefix):
    """Every pair of formats, 40 x 24 x 160 with both scales: made, run, checked; one line per pair."""
    for i, fa in enumerate(FORMATS):
        for j, fb in enumerate(FORMATS):
            p = "%s.%s_%s" % (prefix, fa, fb)
            make(p, fa, fb, 40, 24, 160, 1, 100 + 5 * i + j, False)
            run = subprocess.run([tilec, "run", kernel, "--grid", "2,2", "-D", 'LHS="%s"' % fa, "-D", 'RHS="%s"' % fb,
                                  "--", p + ".a.npy", p + ".sa.npy", p + ".b.npy", p + ".sb.npy",
                                  "out:%s.c.npy:fp32:40x24" % p, "40", "24", "160"], capture_output=True, text=True)
            print("%s x %s: " % (fa, fb), end="")
            if run.returncode:
                print("tilec failed: %s" % run.stderr.strip()[:300])
                continue
            check(p, p + ".c.npy", fa, fb, 40, 24, 160, 1, "both", False)


def main(argv):
    cmd, d = argv[1], argv[2]
    if cmd == "pairs":
        pairs(argv[2], argv[3], argv[4])
    elif cmd == "make":
        fa, fb = argv[3], argv[4]
        m, n, k, packed_k, seed = (int(v) for v in argv[5:10])
        make(d, fa, fb, m, n, k, packed_k, seed, argv[10:] == ["nan"])
    else:
        c_path, fa, fb = argv[3], argv[4], argv[5]
        m, n, k, packed_k = (int(v) for v in argv[6:10])
        check(d, c_path, fa, fb, m, n, k, packed_k, argv[10], argv[11:] == ["fast"])


if __name__ == "__main__":
    main(sys.argv)
