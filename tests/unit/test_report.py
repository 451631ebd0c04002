"""bench/report.py merging repeated runs: fresh random figures for tile and Triton over three rounds
(written as run.sh's BENCH_ROUNDS writes them, one CSV per harness and round), the report's tables
checked against medians and ratios computed here, the flags against the threshold, and a single
round left as it was; and matmul_configs.py's CSV (per-config rows ignored, best-of-each rows a matmul
table).  Exit status 0 when every check holds."""
import csv
import os
import random
import statistics
import subprocess
import sys
import tempfile

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "report.py")
SIZES = [256, 384, 1000, 4096]  # 1000: not a power of two
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL: " + what)


def write_csv(path, impl, figures):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "size", "impl", "ms", "gbps", "tflops", "gpu"])
        for size, gbps in figures.items():
            w.writerow(["softmax", size, impl, "%.6f" % (1.0 / gbps), "%.3f" % gbps, "", "Test GPU"])


def read_table(path):
    with open(path, newline="") as f:
        return {int(r["size"]): r for r in csv.DictReader(f)}


def check_configs(rng, d):
    """matmul_configs.py's CSV: its per-config rows (several per shape and side) are not figures of the
    report; its best-of-each rows are a matmul table, with ratios to 3 decimals and flags below 1.0x."""
    shapes = ["1024x1024x1024", "3000x1000x520"]
    best = {(s, impl): rng.uniform(100, 700) for s in shapes for impl in ("tile", "triton", "cublas")}
    path = os.path.join(d, "matmul_configs.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "size", "impl", "config", "ms", "tflops", "gpu"])
        for s in shapes:
            for config in range(8):
                for impl in ("tile", "triton"):
                    w.writerow(["matmul_configs", s, impl, config, 1.0, rng.uniform(50, 700), "Test GPU"])
            for impl in ("tile", "triton", "cublas"):
                w.writerow(["matmul_configs_best", s, impl, 0, 1.0, "%.6f" % best[(s, impl)], "Test GPU"])
    out = os.path.join(d, "configs")
    subprocess.run([sys.executable, REPORT, "--out", out, path], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "matmul_configs_best.csv"), newline="") as f:
        table = {"%sx%sx%s" % (r["M"], r["N"], r["K"]): r for r in csv.DictReader(f)}
    summary = open(os.path.join(out, "summary.md")).read()
    check(sorted(table) == sorted(shapes), "configs shapes %s" % sorted(table))
    for s in shapes:
        row = table.get(s, {})
        ratio = best[(s, "tile")] / best[(s, "triton")]
        check(abs(float(row.get("tile_tflops", 0)) - best[(s, "tile")]) < 1e-3, "%s: tile %s" % (s, row.get("tile_tflops")))
        check(abs(float(row.get("tile_over_triton", 0)) - ratio) < 1e-3, "%s: ratio %s, want %.3f" % (s, row.get("tile_over_triton"), ratio))
        flagged = "matmul_configs_best %s: tile %.3fx Triton" % (s, ratio) in summary
        check(flagged == (ratio < 1.0), "%s: flagged %s at ratio %.3f" % (s, flagged, ratio))
    check("median" not in summary, "one run of matmul_configs.py said to be a median of several")


def main():
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    rounds = {impl: [{n: rng.uniform(500, 3000) for n in SIZES} for _ in range(3)] for impl in ("tile", "triton")}
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for impl in ("tile", "triton"):
            for i, figures in enumerate(rounds[impl]):
                path = os.path.join(d, "%s.%d.csv" % (impl, i + 1))
                write_csv(path, impl, figures)
                paths.append(path)
        out = os.path.join(d, "out")
        subprocess.run([sys.executable, REPORT, "--out", out] + paths, check=True, stdout=subprocess.DEVNULL)
        table = read_table(os.path.join(out, "softmax.csv"))
        summary = open(os.path.join(out, "summary.md")).read()
        check(sorted(table) == SIZES, "sizes %s" % sorted(table))
        for n in SIZES:
            tile = statistics.median(r[n] for r in rounds["tile"])
            triton = statistics.median(r[n] for r in rounds["triton"])
            row = table.get(n, {})
            check(abs(float(row.get("tile_gbps", 0)) - tile) < 1e-3, "size %d: tile %s, want %.3f" % (n, row.get("tile_gbps"), tile))
            check(abs(float(row.get("triton_gbps", 0)) - triton) < 1e-3, "size %d: triton %s, want %.3f" % (n, row.get("triton_gbps"), triton))
            check(abs(float(row.get("tile_over_triton", 0)) - tile / triton) < 1e-3, "size %d: ratio %s" % (n, row.get("tile_over_triton")))
            flagged = "softmax at %d: tile" % n in summary
            check(flagged == (tile / triton < 0.95), "size %d: flagged %s at ratio %.3f" % (n, flagged, tile / triton))
        check("median of up to 3 runs" in summary, "the summary does not say the figures are medians of 3 runs")

        single = os.path.join(d, "single")
        subprocess.run([sys.executable, REPORT, "--out", single, paths[0], paths[3]], check=True, stdout=subprocess.DEVNULL)
        one = read_table(os.path.join(single, "softmax.csv"))
        for n in SIZES:
            check(abs(float(one[n]["tile_gbps"]) - rounds["tile"][0][n]) < 1e-3, "single round, size %d" % n)
        check("median" not in open(os.path.join(single, "summary.md")).read(), "a single round says median")
        check_configs(rng, d)
    if failures:
        print("%d failed (seed %d)" % (failures, seed))
        return 1
    print("report.py: medians, ratios and flags of %d rounds checked (seed %d)" % (3, seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
