"""References for run_descriptor_methods.tl: a tensor descriptor's atomics, gather and scatter, in Python."""
import sys

from npy import load


def blocks(x, m, n, bm, bn):
    """Every program's block of x (zeros past the edges), as desc.load gives them."""
    gm, gn = -(-m // bm), -(-n // bn)
    at = lambda r, c: x[r * n + c] if r < m and c < n else 0
    return [[[at(pm * bm + i, pn * bn + j) for j in range(bn)] for i in range(bm)] for pm in range(gm) for pn in range(gn)]


def reduce_check(argv):
    x, add, mx, mn, band, bor, bxor = (load(p) for p in argv[:7])
    m, n, bm, bn, guard = (int(v) for v in argv[7:12])
    bad = []
    # the own-place atomic_add wrote x inside the shape, nothing past it; then block (0, 0) got every block
    want_add = [float(v) for v in x] + [0.0] * guard
    folds = {"max": [0] * (bm * bn), "min": [0] * (bm * bn), "and": [0] * (bm * bn), "or": [0] * (bm * bn),
             "xor": [0] * (bm * bn)}
    ops = {"max": max, "min": min, "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}
    for blk in blocks(x, m, n, bm, bn):
        for i in range(bm):
            for j in range(bn):
                if i < m and j < n:
                    want_add[i * n + j] += blk[i][j]
                for k, f in ops.items():
                    folds[k][i * bn + j] = f(folds[k][i * bn + j], blk[i][j])
    bad += ["add[%d]" % i for i in range(len(want_add)) if len(add) != len(want_add) or add[i] != want_add[i]]
    for name, got in zip(("max", "min", "and", "or", "xor"), (mx, mn, band, bor, bxor)):
        want = [0] * (m * n + guard)
        for i in range(min(bm, m)):
            for j in range(min(bn, n)):
                want[i * n + j] = folds[name][i * bn + j]
        bad += ["%s[%d]" % (name, i) for i in range(len(want)) if len(got) != len(want) or got[i] != want[i]]
    print("ok %d" % len(add) if not bad else "mismatch at %s" % bad[:5])


def gather_check(argv):
    x, idx, g, s = (load(p) for p in argv[:4])
    m, n, r, c, gm, gn, p = (int(v) for v in argv[4:11])
    bad = []
    # g: gm * r rows of gn * c, row k from x's row idx[k] (zeros outside x)
    for k in range(gm * r):
        for j in range(gn * c):
            want = x[idx[k] * n + j] if 0 <= idx[k] < m and j < n else 0.0
            if g[k * gn * c + j] != want:
                bad.append("g[%d]" % (k * gn * c + j))
    # s: the gathered rows doubled, row k scattered to row (3 * k) % p where that is inside (NaN elsewhere)
    want = [None] * (m * n)
    for k in range(gm * r):
        to = 3 * k % p
        for j in range(n):
            if to < m and 0 <= idx[k] < m:
                want[to * n + j] = 2 * x[idx[k] * n + j]
            elif to < m:
                want[to * n + j] = 0.0
    bad += ["s[%d]" % i for i in range(m * n) if not (s[i] == want[i] or (want[i] is None and s[i] != s[i]))]
    print("ok %d" % len(g) if not bad else "mismatch at %s" % bad[:5])


if __name__ == "__main__":
    {"reduce": reduce_check, "gather": gather_check}[sys.argv[1]](sys.argv[2:])
