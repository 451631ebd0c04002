"""Reference for run_inline_asm_pack.tl's kernel (run on the GPU by tests/gpu/inline_asm.sh).

  asm_pack_ref.py W OUT N    from the words w (x = w & 0xFF, h = (w >> 8) & 0xFFFF, b = 3 w mod 2^32):
                             OUT[k] = x of k with its run of 4 reversed, OUT[N + k] = h of k with its
                             run of 2 swapped, OUT[2N + k] = (w + b) mod 2^32 as int32 and
                             OUT[3N + k] = its carry; prints "ok N" or mismatches (N a multiple of 4)
"""
import sys

from npy import load


def as_int32(v):
    return v - ((v >> 31) << 32)


def expected(w, n, k):
    g, j = k - k % 4, k % 4
    h = (w[k - k % 2 + 1 - k % 2] >> 8) & 0xFFFF
    b = (3 * w[k]) & 0xFFFFFFFF
    return [w[g + 3 - j] & 0xFF, h, as_int32((w[k] + b) & 0xFFFFFFFF), (w[k] + b) >> 32]


def main(argv):
    w, out = load(argv[1]), load(argv[2])
    n = int(argv[3])
    bad = [k for k in range(n) if [out[i * n + k] for i in range(4)] != expected(w, n, k)]
    print("ok %d" % n if not bad else "bad %s" % bad[:8])


if __name__ == "__main__":
    main(sys.argv)
