"""Checks run_tl_names.tl's output: tl_names_ref.py X Y N; prints "ok COUNT"."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from npy import load  # noqa: E402

x, y, n = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
block = 16
count = 0
for row in range(len(y) // 5):
    vals = x[row * n:row * n + n] + [0] * (block - n)  # the masked columns load 0
    bits = [v + 128 for v in vals]
    ored = 0
    for b in bits:
        ored |= b
    want = [ored, ored, sum(v - 7 for v in vals), max(-3 * v for v in vals), (row + 1) * 6]
    got = y[row * 5:row * 5 + 5]
    if got != want:
        sys.exit("row %d: %r, want %r" % (row, got, want))
    count += 5
print("ok", count)
