"""The reference of a tl.map_elementwise test: the scalar function itself, run by Python element by element.

  map_ref.py KERNEL.tl FN OUT FROM IN...   OUT[FROM + i] == FN(IN1[i], IN2[i], ...) for each element i of IN1

The .tl file's functions are Python: its imports and decorators are left out and the rest is executed, so
FN must use only Python's operators and range (its // and % on non-negative values, where Python's and
the kernel's agree).  Prints "ok N" or the first mismatches.
"""
import sys

from npy import load


class Anything:
    def __getattr__(self, name):
        return None


def scalar_functions(path):
    lines = [line for line in open(path, encoding="utf-8").read().split("\n")
             if not line.startswith("@") and not line.startswith("import ")]
    names = {"tl": Anything()}  # the kernels' annotations (tl.constexpr) are read when they are defined
    exec("\n".join(lines), names)
    return names


def main(argv):
    fn = scalar_functions(argv[1])[argv[2]]
    out, start, ins = load(argv[3]), int(argv[4]), [load(p) for p in argv[5:]]
    want = [fn(*args) for args in zip(*ins)]
    bad = [(i, out[start + i], w) for i, w in enumerate(want) if out[start + i] != w]
    print("ok %d" % len(want) if not bad else "mismatch (index, kernel, Python) %s" % bad[:5])


if __name__ == "__main__":
    main(sys.argv)
