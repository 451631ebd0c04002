"""References for run_gather.tl, computed in Python from the .npy inputs.

  gather_ref.py rows X I A ROWS COLS K     A[r, k] == X[r, I[r, k] % COLS]    (X ROWS x COLS, I and A ROWS x K)
  gather_ref.py cols X J B ROWS COLS K     B[k, c] == X[J[k, c] % ROWS, c]    (J and B K x COLS)
Each prints "ok N" or the first mismatches.
"""
import sys

from npy import load


def main(argv):
    cmd, x, i, out = argv[1], load(argv[2]), load(argv[3]), load(argv[4])
    rows, cols, k = (int(v) for v in argv[5:8])
    if cmd == "rows":
        ref = [x[r * cols + i[r * k + j] % cols] for r in range(rows) for j in range(k)]
    else:
        ref = [x[(i[j * cols + c] % rows) * cols + c] for j in range(k) for c in range(cols)]
    bad = [n for n in range(len(ref)) if n >= len(out) or out[n] != ref[n]]
    print("ok %d" % len(out) if not bad and len(out) == len(ref) else "mismatch at %s" % bad[:5])


if __name__ == "__main__":
    main(sys.argv)
