"""Reference for run_histogram.tl, computed in Python from the .npy inputs.

  histogram_ref.py X H N BLOCK BINS
      H[p * BINS + b] == the count of b among X[p * BLOCK : min((p + 1) * BLOCK, N)], for every program p
      (values outside [0, BINS) are not counted)
Prints "ok N" or the first mismatches.
"""
import sys

from npy import load


def main(argv):
    x, h = load(argv[1]), load(argv[2])
    n, block, bins = (int(v) for v in argv[3:6])
    ref = []
    for start in range(0, n, block):
        part = x[start:min(start + block, n)]
        ref += [part.count(b) for b in range(bins)]
    bad = [i for i in range(len(ref)) if i >= len(h) or h[i] != ref[i]]
    print("ok %d" % len(h) if not bad and len(h) == len(ref) else "mismatch at %s: %s, expected %s" % (
        bad[:5], [h[i] for i in bad[:5] if i < len(h)], [ref[i] for i in bad[:5]]))


if __name__ == "__main__":
    main(sys.argv)
