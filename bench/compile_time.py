#!/usr/bin/env python3
"""Compile time of gnn-compile against the depth of a model.

The zoo's residual GCN (deep_gcn) at depths 16, 32, 64, 128 and 256 (or
--depths), each compiled to the LLVM dialect (-emit=mlir-llvm: every gnn
pass and the lowering), to an object file (-emit=obj: + LLVM's O2 and code
generation) and to an executable; wall time of each, and the ratio of each
depth's time to the previous depth's (2.0 is linear in the depth). Issue
17's targets: depth 128 well under a minute and within about 2.5x of depth
64; depth 256 compiles.

Writes docs/benchmarks/compile-time.{json,md}. Not a test: numbers drift on
a shared machine (test/gnn-compile/compile-time-depth.test only guards
against a return of the quadratic blow-ups, with a wide margin).

Usage: bench/compile_time.py [--depths 16,32,64,128,256]
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(os.environ.get("GNN_BUILD_DIR", os.path.join(ROOT, "build")),
                   "bin")
STAGES = [("mlir-llvm", "passes + lowering"), ("obj", "+ LLVM O2 + codegen"),
          ("exe", "+ link")]


def log(msg):
    print(f"[bench] {msg}", flush=True)


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--depths", default="16,32,64,128,256")
    args = p.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for depth in depths:
            src = os.path.join(tmp, f"deep{depth}.mlir")
            with open(src, "w") as f:
                subprocess.run([sys.executable, "-m", "gnnc.zoo", "--print",
                                "deep_gcn", "--depth", str(depth)],
                               check=True, stdout=f, env=env)
            row = {"depth": depth}
            for emit, _ in STAGES:
                out = os.path.join(tmp, f"deep{depth}.{emit}")
                row[emit] = timed([os.path.join(BIN, "gnn-compile"), src,
                                   f"-emit={emit}", "-o", out])
                log(f"depth {depth} -emit={emit}: {row[emit]:.2f} s")
            rows.append(row)
    out_dir = os.path.join(ROOT, "docs", "benchmarks")
    with open(os.path.join(out_dir, "compile-time.json"), "w") as f:
        json.dump(rows, f, indent=2)
    lines = [
        "# Compile time against model depth",
        "",
        f"`bench/compile_time.py` ({datetime.date.today()}): the zoo's "
        "residual GCN (`deep_gcn`) at each depth, wall time of gnn-compile "
        "to each output; ×: the time over the previous depth's (2.0 is "
        "linear).",
        "",
        "| depth | " + " | ".join(f"-emit={e} ({what})" for e, what in STAGES)
        + " |",
        "|---|" + "---|" * len(STAGES),
    ]
    for i, row in enumerate(rows):
        cells = []
        for emit, _ in STAGES:
            cell = f"{row[emit]:.2f} s"
            if i and rows[i - 1]["depth"] * 2 == row["depth"]:
                cell += f" (×{row[emit] / rows[i - 1][emit]:.2f})"
            cells.append(cell)
        lines.append(f"| {row['depth']} | " + " | ".join(cells) + " |")
    with open(os.path.join(out_dir, "compile-time.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
