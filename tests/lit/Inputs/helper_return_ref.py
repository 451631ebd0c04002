"""Checks run_helper_return_if.tl's output: helper_return_ref.py X Y N BLOCK; prints "ok COUNT"."""
import struct
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from npy import load  # noqa: E402


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


x, y, n, block = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
programs = len(y) // 20
count = 0
for pid in range(programs):
    row = n - 1 if pid >= n else pid
    v = x[row]
    s = -1 if v < 0 else 1
    a = -v if v < 0 else v
    b = f32(v - 0.25)
    pick = (f32(v + b) if b > 0 else v) if v > 0 else f32(b * 3.0)
    want = [float(s), a, pick, float(row)]
    for i in range(block):
        e = f32(float(i) + v)
        want.append(f32(e * 2.0) if s > 0 else f32(e - 1.0))
    got = y[pid * 20:pid * 20 + 20]
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            sys.exit("program %d, item %d: %r, want %r" % (pid, i, g, w))
        count += 1
print("ok", count)
