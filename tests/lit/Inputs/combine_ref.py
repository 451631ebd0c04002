"""References for run_combine.tl, computed in Python from the .npy inputs (fp32 rounding after every
operation, as the kernel's combine functions round).

  combine_ref.py argmax X V I ROWS COLS          V[r] = max of row r, I[r] its first index
  combine_ref.py recurrence A B H ROWS COLS [reverse]
                                                 H[r, t] = A[r, t] * H[r, t-1] + B[r, t] (from the end with reverse)
  combine_ref.py xor X Y ROWS COLS               Y[r] = xor of row r
Each prints "ok N" or the first mismatches.
"""
import struct
import sys

from npy import load


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def main(argv):
    cmd = argv[1]
    bad = []
    if cmd == "argmax":
        x, v, i = load(argv[2]), load(argv[3]), load(argv[4])
        rows, cols = int(argv[5]), int(argv[6])
        for r in range(rows):
            row = x[r * cols:(r + 1) * cols]
            if v[r] != max(row) or i[r] != row.index(max(row)):
                bad.append(r)
        n = rows
    elif cmd == "recurrence":
        a, b, h = load(argv[2]), load(argv[3]), load(argv[4])
        rows, cols = int(argv[5]), int(argv[6])
        reverse = len(argv) > 7 and argv[7] == "reverse"
        for r in range(rows):
            acc = None
            order = range(cols - 1, -1, -1) if reverse else range(cols)
            for t in order:
                k = r * cols + t
                acc = b[k] if acc is None else f32(f32(acc * a[k]) + b[k])
                if h[k] != acc:
                    bad.append(k)
        n = rows * cols
    elif cmd == "xor":
        x, y = load(argv[2]), load(argv[3])
        rows, cols = int(argv[4]), int(argv[5])
        for r in range(rows):
            acc = 0
            for v in x[r * cols:(r + 1) * cols]:
                acc ^= v
            if y[r] != acc:
                bad.append(r)
        n = rows
    print("ok %d" % n if not bad else "mismatch at %s" % bad[:5])


if __name__ == "__main__":
    main(sys.argv)
