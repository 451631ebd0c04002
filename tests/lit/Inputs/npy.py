"""Tiny .npy writer/checker for the tilec run tests (no numpy needed).

  npy.py make PATH DTYPE N SEED      write N random values (f4, f8: [-1, 1), i4: [-100, 100), u4: [0, 2^32))
  npy.py add X Y Z                   check Z == X + Y elementwise (f4), print "ok N"
  npy.py same X Y                    check Y == X elementwise, print "ok N"
  npy.py xor X Y MASK                check Y == X ^ MASK elementwise (integers)
  npy.py minmax X Y LO HI            check LO == min(X, Y) and HI == max(X, Y) elementwise
  npy.py softmax X Z ROWS COLS       check each row of Z is softmax of X's row (rel 1e-5)
  npy.py matmul X Y Z M K N [S]      check Z == S * (X @ Y) exactly (X M x K, Y K x N, row-major; integers; S: 1)
  npy.py affine X Y R C XS YS A B    check Y[r*YS+c] == fp32(X[r*XS+c]*A + B) for r < R, c < C and every
                                     other element of Y NaN (as tilec run leaves outputs no one writes)
  npy.py matmulf X Y Z M K N         check Z == X @ Y (fp32, row-major) within 1e-5 * (1 + sum |x*y|)
  npy.py histogram X H BINS [S]      check H[b] == S * (count of X's values v with (v + 100) % BINS == b) (S: 1)
  npy.py shapes X Y Z R C BR BC      check Z against run_join_split.tl's sections, from the R x C inputs
                                     padded with 0 to BR x BC: join, interleave, cat along 0 and 1,
                                     flips, the halves of split
  npy.py fp8round X Z SCALE          check Z[i] == fp8e4nv(fp32(X[i]*SCALE)) and Z[N+i] == fp8e5(...) as fp32
                                     (nearest even by search over each format's values, saturating; N = len(X))
  npy.py fp8matmul X Y Z M K N       check Z == fp8e4nv(X) @ fp8e5(Y) (exact products) within 1e-6 * (1 + sum |x*y|)
  npy.py fp8e4b15round X Z SCALE     check Z[i] == float8e4b15(fp32(X[i]*SCALE)) as fp32 (nearest by search over
                                     its values, ties away from zero, saturating at 1.75, as Triton's conversion)
  npy.py fp8e4b15matmul X Y Z M K N  check Z == float8e4b15(X) @ float8e4b15(Y) (exact products), as fp8matmul
  npy.py fma X Y W Z                 check Z[i] == fp32(X*Y + W), Z[N+i] == fp32(W - X*Y), Z[2N+i] == fp32(X*Y - W),
                                     each rounded once from the exact value (N = len(X))
  npy.py print PATH                  print the values, one line
"""
import math
import random
import struct
import sys

CODES = {"f4": ("<f4", "f"), "i4": ("<i4", "i"), "u4": ("<u4", "I"), "f8": ("<f8", "d"), "i8": ("<i8", "q"),
         "u8": ("<u8", "Q"), "u1": ("|u1", "B"), "u2": ("<u2", "H")}


def save(path, values, code, shape):
    descr, fmt = CODES[code]
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def load(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    n = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + n].decode()
    fmt = next(f for descr, f in CODES.values() if "'%s'" % descr in header)
    body = data[10 + n:]
    return list(struct.unpack("<%d%s" % (len(body) // struct.calcsize(fmt), fmt), body))


def fp8_values(exp_bits):
    """The finite non-negative values of e4m3fn (exp_bits 4: no infinities, S.1111.111 NaN) or e5m2 (5),
    by code."""
    man_bits, bias = 7 - exp_bits, (1 << (exp_bits - 1)) - 1
    values = []
    for code in range(128):
        e, m = code >> man_bits, code & ((1 << man_bits) - 1)
        if (exp_bits == 4 and code == 0x7f) or (exp_bits == 5 and e == 31):
            break
        values.append(m * 2.0 ** (1 - bias - man_bits) if e == 0 else (1 + m / 2.0 ** man_bits) * 2.0 ** (e - bias))
    return values


def fp8_round(v, values):
    """v to the nearest of values (ties to the even code), sign kept, saturating at the largest."""
    if math.isnan(v):
        return v
    a = abs(v)
    if a >= values[-1]:
        r = values[-1]
    else:
        code = min(range(len(values)), key=lambda c: (abs(a - values[c]), c & 1))
        r = values[code]
    return -r if v < 0 else r


def e4b15_values():
    """The non-negative values of float8e4b15 (e4m3, bias 15, every code a number) by code, to 0x7e (1.75):
    the conversion saturates there."""
    return [m * 2.0 ** -17 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 15)
            for code in range(0x7f) for e, m in [(code >> 3, code & 7)]]


def e4b15_round(v, values):
    """v to the nearest of values, the larger on a tie, sign kept, saturating at the largest."""
    a = min(abs(v), values[-1])
    r = values[max(range(len(values)), key=lambda c: (-abs(a - values[c]), c))]
    return -r if v < 0 else r


def matmul_check(a, b, z, m, k, n, rtol=1e-6):
    """Prints ok when z = a @ b within rtol of the sum of |a * b| (plus one) at every element."""
    bad = []
    for i in range(m):
        for j in range(n):
            ref = sum(a[i * k + p] * b[p * n + j] for p in range(k))
            size = sum(abs(a[i * k + p] * b[p * n + j]) for p in range(k))
            if len(z) != m * n or not abs(z[i * n + j] - ref) <= rtol * (1 + size):
                bad.append(i * n + j)
    print("ok %d" % len(z) if not bad else "mismatch at %s" % bad[:5])


def f32_nearest(exact):
    """The fp32 value nearest the Fraction `exact`, ties to even (the neighbours of its double, searched)."""
    from fractions import Fraction
    f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
    bits = lambda v: struct.unpack("<I", struct.pack("<f", v))[0]
    near = f32(float(exact))
    candidates = [near, math.nextafter(near, math.inf), math.nextafter(near, -math.inf)]
    candidates = [f32(c) for c in candidates]
    return min(candidates, key=lambda c: (abs(Fraction(c) - exact), bits(c) & 1))


def main(argv):
    cmd = argv[1]
    if cmd == "make":
        path, code, n, seed = argv[2], argv[3], int(argv[4]), int(argv[5])
        rng = random.Random(seed)
        if code in ("f4", "f8"):
            values = [rng.uniform(-1, 1) for _ in range(n)]
        elif code in ("u1", "u2", "u4"):
            values = [rng.randrange(0, 1 << 8 * struct.calcsize(CODES[code][1])) for _ in range(n)]
        else:
            values = [rng.randrange(-100, 100) for _ in range(n)]
        save(path, values, code, (n,))
    elif cmd == "list":  # PATH CODE V...: those values
        code = argv[3]
        values = [float(v) if code.startswith("f") else int(v) for v in argv[4:]]
        save(argv[2], values, code, (len(values),))
    elif cmd == "add":
        x, y, z = load(argv[2]), load(argv[3]), load(argv[4])
        bad = [i for i in range(len(z)) if math.isnan(z[i]) or abs(z[i] - struct.unpack("f", struct.pack("f", x[i] + y[i]))[0]) > 1e-7]
        print("ok %d" % len(z) if not bad and len(z) == len(x) else "mismatch at %s" % bad[:5])
    elif cmd == "same":
        x, y = load(argv[2]), load(argv[3])
        bad = [i for i in range(len(y)) if x[i] != y[i]]
        print("ok %d" % len(y) if not bad and len(y) == len(x) else "mismatch at %s" % bad[:5])
    elif cmd == "xor":
        x, y, mask = load(argv[2]), load(argv[3]), int(argv[4])
        bad = [i for i in range(len(y)) if y[i] != x[i] ^ mask]
        print("ok %d" % len(y) if not bad and len(y) == len(x) else "mismatch at %s" % bad[:5])
    elif cmd == "minmax":
        x, y, lo, hi = load(argv[2]), load(argv[3]), load(argv[4]), load(argv[5])
        bad = [i for i in range(len(x)) if lo[i] != min(x[i], y[i]) or hi[i] != max(x[i], y[i])]
        print("ok %d" % len(x) if not bad and len(lo) == len(hi) == len(x) else "mismatch at %s" % bad[:5])
    elif cmd == "fma":
        from fractions import Fraction
        x, y, w, z = load(argv[2]), load(argv[3]), load(argv[4]), load(argv[5])
        n = len(x)
        bad = []
        for i in range(n):
            p = Fraction(x[i]) * Fraction(y[i])
            want = (f32_nearest(p + Fraction(w[i])), f32_nearest(Fraction(w[i]) - p), f32_nearest(p - Fraction(w[i])))
            bad += [i + k * n for k in range(3) if len(z) != 3 * n or z[i + k * n] != want[k]]
        print("ok %d" % len(z) if not bad else "mismatch at %s" % bad[:5])
    elif cmd == "widen":  # z = x's bytes as e5m2, then y's halves as bf16, in fp32 (NaN for NaN)
        x, y, z = load(argv[2]), load(argv[3]), load(argv[4])
        e5m2 = [struct.unpack("<e", struct.pack("<H", b << 8))[0] for b in x]
        bf16 = [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in y]
        want = e5m2 + bf16
        same = lambda a, b: a == b or (math.isnan(a) and math.isnan(b))
        bad = [i for i in range(len(want)) if len(z) != len(want) or not same(z[i], want[i])]
        print("ok %d" % len(z) if not bad else "mismatch at %s" % bad[:5])
    elif cmd == "div":  # z = x / y rounded to fp32, then x / y in fp64, then exp(x) within 2 fp32 ulp
        x, y, z = load(argv[2]), load(argv[3]), load(argv[4])
        f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
        n = len(x)
        want = [f32(x[i] / y[i]) for i in range(n)] + [x[i] / y[i] for i in range(n)]
        bad = [i for i in range(2 * n) if len(z) != 3 * n or z[i] != want[i]]
        bad += [2 * n + i for i in range(n) if len(z) != 3 * n or abs(z[2 * n + i] - math.exp(x[i])) > 2.5e-7 * math.exp(x[i])]
        print("ok %d" % len(z) if not bad else "mismatch at %s" % bad[:5])
    elif cmd == "scaled":  # y == k * x, element for element (one argument pair after another)
        k, bad, total = float(argv[2]), [], 0
        for xp, yp in zip(argv[3::2], argv[4::2]):
            x, y = load(xp), load(yp)
            bad += ["%s[%d]" % (yp, i) for i in range(max(len(x), len(y))) if len(x) != len(y) or y[i] != k * x[i]]
            total += len(y)
        print("ok %d" % total if not bad else "mismatch at %s" % bad[:5])
    elif cmd == "print":
        print(" ".join(str(v) for v in load(argv[2])))
    elif cmd == "matmul":
        x, y, z = load(argv[2]), load(argv[3]), load(argv[4])
        m, k, n = int(argv[5]), int(argv[6]), int(argv[7])
        scale = int(argv[8]) if len(argv) > 8 else 1
        ref = [scale * sum(x[i * k + p] * y[p * n + j] for p in range(k)) for i in range(m) for j in range(n)]
        bad = [i for i in range(m * n) if len(z) != m * n or z[i] != ref[i]]
        print("ok %d" % len(z) if not bad else "mismatch at %s" % bad[:5])
    elif cmd == "affine":
        x, y = load(argv[2]), load(argv[3])
        rows, cols, xs, ys = (int(v) for v in argv[4:8])
        a, b = float(argv[8]), float(argv[9])
        f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
        want = [float("nan")] * len(y)
        for r in range(rows):
            for c in range(cols):
                want[r * ys + c] = f32(f32(x[r * xs + c] * a) + b)
        bad = [i for i in range(len(y)) if not (y[i] == want[i] or (math.isnan(y[i]) and math.isnan(want[i])))]
        print("ok %d" % (rows * cols) if not bad else "mismatch at %s" % bad[:5])
    elif cmd == "matmulf":
        x, y, z = load(argv[2]), load(argv[3]), load(argv[4])
        matmul_check(x, y, z, int(argv[5]), int(argv[6]), int(argv[7]), rtol=1e-5)
    elif cmd == "fp8round":
        x, z, scale = load(argv[2]), load(argv[3]), float(argv[4])
        f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
        n = len(x)
        want = [fp8_round(f32(v * scale), fp8_values(4)) for v in x] + [fp8_round(f32(v * scale), fp8_values(5)) for v in x]
        bad = [i for i in range(2 * n) if len(z) != 2 * n or z[i] != want[i]]
        print("ok %d" % len(z) if not bad else "mismatch at %s" % [(i, z[i], want[i]) for i in bad[:5]])
    elif cmd == "fp8matmul":
        x, y, z = load(argv[2]), load(argv[3]), load(argv[4])
        m, k, n = int(argv[5]), int(argv[6]), int(argv[7])
        e4, e5 = fp8_values(4), fp8_values(5)
        matmul_check([fp8_round(v, e4) for v in x], [fp8_round(v, e5) for v in y], z, m, k, n)
    elif cmd == "fp8e4b15round":
        x, z, scale = load(argv[2]), load(argv[3]), float(argv[4])
        f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
        values = e4b15_values()
        want = [e4b15_round(f32(v * scale), values) for v in x]
        bad = [i for i in range(len(x)) if len(z) != len(x) or z[i] != want[i]]
        print("ok %d" % len(z) if not bad else "mismatch at %s" % [(i, z[i], want[i]) for i in bad[:5]])
    elif cmd == "fp8e4b15matmul":
        x, y, z = load(argv[2]), load(argv[3]), load(argv[4])
        values = e4b15_values()
        matmul_check([e4b15_round(v, values) for v in x], [e4b15_round(v, values) for v in y], z,
                     int(argv[5]), int(argv[6]), int(argv[7]))
    elif cmd == "histogram":
        x, h, bins = load(argv[2]), load(argv[3]), int(argv[4])
        scale = int(argv[5]) if len(argv) > 5 else 1
        ref = [scale * sum(1 for v in x if (v + 100) % bins == b) for b in range(bins)]
        print("ok %d" % len(x) if h == ref else "mismatch: %s, expected %s" % (h, ref))
    elif cmd == "shapes":
        x, y, z = load(argv[2]), load(argv[3]), load(argv[4])
        rows, cols, br, bc = (int(v) for v in argv[5:9])
        pad = lambda v: [[v[r * cols + c] if r < rows and c < cols else 0.0 for c in range(bc)] for r in range(br)]
        a, b = pad(x), pad(y)
        flat = lambda m: [v for row in m for v in row]
        want = [v for r in range(br) for c in range(bc) for v in (a[r][c], b[r][c])]  # join
        want += flat([[(a, b)[c % 2][r][c // 2] for c in range(2 * bc)] for r in range(br)])  # interleave
        want += flat(a + b) + flat([a[r] + b[r] for r in range(br)])  # cat along 0, along 1
        want += flat(a[::-1]) + flat([row[::-1] for row in b])  # flip along 0, along 1
        want += flat([row[0::2] for row in a]) + flat([row[1::2] for row in a])  # split of a [BR, BC/2, 2] view
        bad = [i for i in range(len(want)) if len(z) != len(want) or z[i] != want[i]]
        print("ok %d" % len(z) if not bad else "mismatch at %s" % bad[:5])
    elif cmd == "softmax":
        x, z, rows, cols = load(argv[2]), load(argv[3]), int(argv[4]), int(argv[5])
        worst = 0.0
        for r in range(rows):
            row = x[r * cols:(r + 1) * cols]
            m = max(row)
            s = sum(math.exp(v - m) for v in row)
            for c in range(cols):
                ref = math.exp(row[c] - m) / s
                got = z[r * cols + c]
                worst = max(worst, float("inf") if math.isnan(got) else abs(got - ref) / ref)
        print("ok" if worst < 1e-5 else "error %g" % worst)


if __name__ == "__main__":
    main(sys.argv)
