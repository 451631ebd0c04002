#!/usr/bin/env python3
"""Merges the benchmark CSVs of bench/bench.c (tile) and bench/triton_bench.py (Triton, torch).

Writes into --out (default bench/results):
  vector_add.csv, softmax.csv   GB/s per size and implementation, and tile/Triton
  matmul_square.csv,            TFLOP/s per shape for tile, Triton and cuBLAS, with
  matmul_llm.csv,               tile/Triton and tile/cuBLAS (matmul_configs_best: the
  matmul_configs_best.csv       rows of that name in matmul_configs.py's CSV, both sides'
                                best config timed in turns with cuBLAS)
  overhead.csv                  compile and launch times per implementation
  vector_add.png, softmax.png,  GB/s or TFLOP/s against size, one line per implementation,
  matmul_square.png,            like Triton's perf_report (matplotlib; an .svg instead
  matmul_llm_N*_K*.png          without it); the LLM shapes one plot per (N, K)
  summary.md                    the tables in markdown, the ratios, and flags: GB/s below
                                0.95x Triton; matmul below 1.0x Triton, or below 0.9x
                                cuBLAS at M = 4096 and 8192
Several CSVs of one implementation (repeated runs) merge: each figure is the median of its rows.
Only the standard library is needed (plus matplotlib for PNGs).

    python3 bench/report.py [--out DIR] tile.csv triton.csv [matmul_configs.csv]
"""
import argparse
import csv
import datetime
import os
import statistics
import sys

THRESHOLD = 0.95
MATMUL_VS_TRITON = 1.0   # tile / Triton below this is flagged, at every matmul shape
MATMUL_VS_CUBLAS = 0.9   # tile / cuBLAS below this is flagged where M is one of:
MATMUL_CUBLAS_AT = (4096, 8192)
MATMUL = {"matmul_square": "fp16 matmul, square (M = N = K): TFLOP/s = 2 * M * N * K / time",
          "matmul_llm": "fp16 matmul, LLM shapes (M tokens, N x K weights): TFLOP/s = 2 * M * N * K / time",
          "matmul_configs_best": "fp16 matmul, each side's best autotune config, timed in turns with the others "
                                 "(matmul_configs.py): TFLOP/s = 2 * M * N * K / time"}
BANDWIDTH = {"vector_add": "vector add, fp32: GB/s = 3 * n * 4 bytes / time",
             "softmax": "softmax, fp32, M = 4096: GB/s = 2 * M * N * 4 bytes / time"}
OVERHEAD = {"compile_cold": "cold compile (empty cache), ms",
            "compile_warm": "warm compile (disk cache), ms",
            "launch_host": "host time per launch, us",
            "launch_sync": "host time per launch with the final synchronise, us"}
IMPLS = ["tile", "tile_py", "triton", "torch", "cublas"]


def read_rows(paths):
    rows, gpus = [], set()
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                rows.append(row)
                gpus.add(row.get("gpu", ""))
    return rows, sorted(g for g in gpus if g)


def median_table(rows, keep, key, value):
    """{key(row): {impl: median of value(row)}} over the rows kept: runs repeated (run.sh's BENCH_ROUNDS)
    give several rows for one size and implementation, and each figure is their median."""
    values = {}
    for row in rows:
        if keep(row):
            values.setdefault(key(row), {}).setdefault(row["impl"], []).append(value(row))
    return {k: {impl: statistics.median(v) for impl, v in by_impl.items()} for k, by_impl in values.items()}


def runs_per_figure(rows):
    """How many rows the most repeated (kernel, size, impl) has: the number of rounds run (the per-config rows
    of matmul_configs.py's CSV, several for one shape and side, are not figures of the report)."""
    counts = {}
    for row in rows:
        if row["kernel"] not in BANDWIDTH and row["kernel"] not in MATMUL and row["kernel"] not in OVERHEAD:
            continue
        k = (row["kernel"], row["size"], row["impl"])
        counts[k] = counts.get(k, 0) + 1
    return max(counts.values()) if counts else 0


def bandwidth_table(rows, kernel):
    """{size: {impl: gbps}} for one kernel, sizes as ints."""
    table = median_table(rows, lambda r: r["kernel"] == kernel and r["gbps"], lambda r: int(r["size"]),
                         lambda r: float(r["gbps"]))
    return dict(sorted(table.items()))


def shape(size):
    """"512x1024x256" -> (512, 1024, 256)."""
    return tuple(int(x) for x in size.split("x"))


def matmul_table(rows, kernel):
    """{(M, N, K): {impl: tflops}}, ordered by (N, K, M)."""
    table = median_table(rows, lambda r: r["kernel"] == kernel and r.get("tflops"), lambda r: shape(r["size"]),
                         lambda r: float(r["tflops"]))
    return dict(sorted(table.items(), key=lambda item: (item[0][1], item[0][2], item[0][0])))


def write_matmul_csv(path, table, impls):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["M", "N", "K"] + ["%s_tflops" % i for i in impls] + ["tile_over_triton", "tile_over_cublas"])
        for (m, n, k), by_impl in table.items():
            w.writerow([m, n, k] + [fmt(by_impl.get(i), 3) for i in impls] +
                       [fmt(ratio(by_impl.get("tile"), by_impl.get(other)), 3) for other in ("triton", "cublas")])


def matmul_markdown(kernel, table, impls, flags):
    lines = ["### %s" % MATMUL[kernel], "",
             "| M x N x K | " + " | ".join("%s TFLOP/s" % i for i in impls) + " | tile / Triton | tile / cuBLAS |",
             "|---|" + "---:|" * len(impls) + "---:|---:|"]
    for (m, n, k), by_impl in table.items():
        cells = []
        for other, limit, where in (("triton", MATMUL_VS_TRITON, True), ("cublas", MATMUL_VS_CUBLAS, m in MATMUL_CUBLAS_AT)):
            r = ratio(by_impl.get("tile"), by_impl.get(other))
            mark = ""
            if r is not None and where and r < limit:
                mark = " **below %.2fx**" % limit
                flags.append("%s %dx%dx%d: tile %.3fx %s" % (kernel, m, n, k, r, "Triton" if other == "triton" else "cuBLAS"))
            cells.append(fmt(r, 3) + mark)
        lines.append("| %dx%dx%d | %s | %s |" % (m, n, k, " | ".join(fmt(by_impl.get(i)) for i in impls), " | ".join(cells)))
    return lines + [""]


def overhead_table(rows):
    """{(metric, what): {impl: value}}: ms for compile times, us for launches."""
    scale = lambda r: 1e3 if r["kernel"].startswith("launch") else 1.0
    return median_table(rows, lambda r: r["kernel"] in OVERHEAD, lambda r: (r["kernel"], r["size"]),
                        lambda r: float(r["ms"]) * scale(r))


def present_impls(table, impls):
    """The implementations with a value somewhere in `table`, in the usual order."""
    return [i for i in impls if any(i in by_impl for by_impl in table.values())]


def ratio(numerator, denominator):
    return numerator / denominator if numerator and denominator else None


def fmt(value, digits=1):
    return "-" if value is None else "%.*f" % (digits, value)


def write_bandwidth_csv(path, table, impls):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["size"] + ["%s_gbps" % i for i in impls] + ["tile_over_triton"])
        for size, by_impl in table.items():
            r = ratio(by_impl.get("tile"), by_impl.get("triton"))
            w.writerow([size] + [fmt(by_impl.get(i), 3) for i in impls] + [fmt(r, 3)])


def write_overhead_csv(path, table, impls):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "what"] + impls + ["triton_over_tile"])
        for (metric, what), by_impl in table.items():
            r = ratio(by_impl.get("triton"), by_impl.get("tile"))
            w.writerow([metric, what] + [fmt(by_impl.get(i), 4) for i in impls] + [fmt(r, 3)])


def bandwidth_markdown(kernel, table, impls, flags):
    lines = ["### %s" % BANDWIDTH[kernel], "",
             "| size | " + " | ".join("%s GB/s" % i for i in impls) + " | tile / Triton |",
             "|---:|" + "---:|" * len(impls) + "---:|"]
    for size, by_impl in table.items():
        r = ratio(by_impl.get("tile"), by_impl.get("triton"))
        mark = ""
        if r is not None and r < THRESHOLD:
            mark = " **below %.2fx**" % THRESHOLD
            flags.append("%s at %d: tile %.2fx Triton" % (kernel, size, r))
        lines.append("| %d | %s | %s%s |" % (size, " | ".join(fmt(by_impl.get(i)) for i in impls), fmt(r, 2), mark))
    return lines + [""]


def overhead_markdown(table, impls, flags):
    lines = ["### compile and launch overhead (lower is better; speed = Triton's time / tile's)", "",
             "| what | " + " | ".join(impls) + " | speed vs Triton |", "|---|" + "---:|" * len(impls) + "---:|"]
    for (metric, what), by_impl in table.items():
        r = ratio(by_impl.get("triton"), by_impl.get("tile"))
        mark = ""
        if r is not None and r < THRESHOLD:
            mark = " **below %.2fx**" % THRESHOLD
            flags.append("%s (%s): tile %.2fx Triton's speed" % (metric, what, r))
        label = "%s: %s" % (OVERHEAD[metric], ("vector add, n=" + what) if metric.startswith("launch") else what)
        lines.append("| %s | %s | %s%s |" % (label, " | ".join(fmt(by_impl.get(i), 3) for i in impls), fmt(r, 2), mark))
    return lines + [""]


def plot(path_base, title, table, impls, log_x, xlabel=None, ylabel="GB/s"):
    """A PNG with matplotlib when it is installed, else an SVG written by hand; returns the file written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return plot_svg(path_base + ".svg", title, table, impls, log_x, ylabel)
    fig, ax = plt.subplots(figsize=(8, 5))
    for impl in impls:
        points = [(s, v[impl]) for s, v in table.items() if impl in v]
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=impl)
    if log_x:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel or ("size (elements)" if log_x else "N (columns)"))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path_base + ".png", dpi=120)
    plt.close(fig)
    return path_base + ".png"


def plot_svg(path, title, table, impls, log_x, ylabel="GB/s"):
    import math
    width, height, margin = 800, 500, 60
    colours = {"tile": "#d62728", "tile_py": "#ff7f0e", "triton": "#1f77b4", "torch": "#2ca02c", "cublas": "#2ca02c"}
    xs = [math.log2(s) if log_x else s for s in table]
    ys = [v for by_impl in table.values() for v in by_impl.values()]
    if not xs or not ys:
        return None
    x0, x1, y1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1, max(ys) * 1.05 or 1
    px = lambda x: margin + (x - x0) / (x1 - x0) * (width - 2 * margin)
    py = lambda y: height - margin - y / y1 * (height - 2 * margin)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
             % (width, height), '<rect width="100%" height="100%" fill="white"/>',
             '<text x="%d" y="20" text-anchor="middle" font-size="15">%s</text>' % (width // 2, title),
             '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (margin, height - margin, width - margin,
                                                                          height - margin),
             '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (margin, margin, margin, height - margin),
             '<text x="15" y="%d" transform="rotate(-90 15 %d)">%s</text>' % (height // 2, height // 2, ylabel)]
    for k in range(6):
        y = y1 * k / 5
        parts.append('<text x="%d" y="%.1f" text-anchor="end">%.3g</text>' % (margin - 5, py(y) + 4, y))
    for s in table:
        x = math.log2(s) if log_x else s
        label = "2^%d" % round(x) if log_x else str(s)
        parts.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="9">%s</text>' % (px(x), height - margin + 14,
                                                                                             label))
    for n, impl in enumerate(impls):
        points = [((math.log2(s) if log_x else s), v[impl]) for s, v in table.items() if impl in v]
        colour = colours.get(impl, "black")
        parts.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                     % (colour, " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in points)))
        parts.append('<text x="%d" y="%d" fill="%s">%s</text>' % (width - margin - 80, margin + 15 * n, colour, impl))
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="bench.c's and triton_bench.py's CSV files")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = parser.parse_args()
    rows, gpus = read_rows(args.csv)
    impls = [i for i in IMPLS if any(r["impl"] == i for r in rows)]
    impls += sorted({r["impl"] for r in rows} - set(impls))
    os.makedirs(args.out, exist_ok=True)
    flags = []
    rounds = runs_per_figure(rows)
    md = ["## Benchmarks: tile vs Triton vs torch", "",
          "GPU: %s; %s; flagged: tile below %.2fx Triton (matmul: below 1.0x Triton, 0.9x cuBLAS at M >= 4096)." % (", ".join(gpus) or "unknown",
                                                                  datetime.date.today().isoformat(), THRESHOLD), ""]
    if rounds > 1:
        md += ["Each figure is the median of up to %d runs (tile's and Triton's harnesses alternating)." % rounds, ""]
    for kernel in BANDWIDTH:
        table = bandwidth_table(rows, kernel)
        if not table:
            continue
        present = present_impls(table, impls)
        write_bandwidth_csv(os.path.join(args.out, kernel + ".csv"), table, present)
        picture = plot(os.path.join(args.out, kernel), BANDWIDTH[kernel].split(":")[0], table, present,
                       log_x=kernel == "vector_add")
        md += bandwidth_markdown(kernel, table, present, flags)
        if picture:
            md += ["![%s](%s)" % (kernel, os.path.basename(picture)), ""]
    for kernel in MATMUL:
        table = matmul_table(rows, kernel)
        if not table:
            continue
        present = present_impls(table, impls)
        write_matmul_csv(os.path.join(args.out, kernel + ".csv"), table, present)
        md += matmul_markdown(kernel, table, present, flags)
        groups = {}  # one plot per (N, K) for the LLM shapes, one for the squares
        for (m, n, k), by_impl in table.items():
            by_weights = kernel == "matmul_llm" or (kernel == "matmul_configs_best" and not m == n == k)
            groups.setdefault((n, k) if by_weights else None, {})[m] = by_impl
        for nk, series in groups.items():
            name = kernel if nk is None else "%s_N%d_K%d" % (kernel, nk[0], nk[1])
            title = MATMUL[kernel].split(":")[0] + ("" if nk is None else ", N=%d K=%d" % nk)
            picture = plot(os.path.join(args.out, name), title, dict(sorted(series.items())), present, log_x=True,
                           xlabel="M" if nk else "M = N = K", ylabel="TFLOP/s")
            if picture:
                md += ["![%s](%s)" % (name, os.path.basename(picture)), ""]
    overhead = overhead_table(rows)
    if overhead:
        present = present_impls(overhead, impls)
        write_overhead_csv(os.path.join(args.out, "overhead.csv"), overhead, present)
        md += overhead_markdown(overhead, present, flags)
    md += ["### flagged (GB/s below %.2fx Triton; matmul below %.2fx Triton, or below %.2fx cuBLAS at M = %s)"
           % (THRESHOLD, MATMUL_VS_TRITON, MATMUL_VS_CUBLAS, " and ".join(str(m) for m in MATMUL_CUBLAS_AT)), ""]
    md += ["- " + f for f in flags] if flags else ["none"]
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("report.py: wrote %s (%d flagged)" % (args.out, len(flags)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
