"""References for run_sort.tl, computed in Python from the .npy inputs.

  sort_ref.py sort X S ROWS COLS BR BC PAD [desc]
      S holds, block after block of BR rows, each row of X (ROWS x COLS, row-major) padded with PAD
      to BC elements (rows past ROWS all PAD), sorted ascending (descending with desc)
  sort_ref.py topk X T ROWS COLS BR BC K PAD
      T holds the K largest of each such padded row, in descending order
  sort_ref.py flat X S N BLOCK PAD
      S holds each BLOCK of X (padded with PAD past N) sorted ascending
Each prints "ok N" or the first mismatches.
"""
import sys

from npy import load


def padded_rows(x, rows, cols, br, bc, pad):
    blocks = (rows + br - 1) // br
    for r in range(blocks * br):
        row = x[r * cols:(r + 1) * cols] if r < rows else []
        yield row + [pad] * (bc - len(row))


def main(argv):
    cmd, x, out = argv[1], load(argv[2]), load(argv[3])
    if cmd == "flat":
        n, block, pad = int(argv[4]), int(argv[5]), float(argv[6])
        ref = []
        for start in range(0, len(out), block):
            part = x[start:min(start + block, n)]
            ref += sorted(part + [pad] * (block - len(part)))
    else:
        rows, cols, br, bc = (int(v) for v in argv[4:8])
        ref = []
        if cmd == "sort":
            pad, desc = int(argv[8]), len(argv) > 9 and argv[9] == "desc"
            for row in padded_rows(x, rows, cols, br, bc, pad):
                ref += sorted(row, reverse=desc)
        else:
            k, pad = int(argv[8]), int(argv[9])
            for row in padded_rows(x, rows, cols, br, bc, pad):
                ref += sorted(row, reverse=True)[:k]
    bad = [i for i in range(max(len(ref), len(out))) if i >= len(ref) or i >= len(out) or ref[i] != out[i]]
    print("ok %d" % len(out) if not bad else "mismatch at %s: %s, expected %s" % (
        bad[:5], [out[i] for i in bad[:5] if i < len(out)], [ref[i] for i in bad[:5] if i < len(ref)]))


if __name__ == "__main__":
    main(sys.argv)
