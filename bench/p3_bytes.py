#!/usr/bin/env python3
"""P³'s push-pull against feature-pulling data parallel, in bytes per
mini-batch (issue 21; ../shared/papers/DIGEST-mggcn-granndis-p3.md §3.7):
at the paper's worked example and at the batch sizes gnnc's sampler
measured on our graphs.

    bench/p3_bytes.py [--hidden 256] [--processes 2,4,8,16] RUN.json...

Each RUN.json is a gnnc executable's --json summary of mini-batch training
(`--batch-size B --fanouts K1,K2`): its "mini_batch" object gives the
batches and, summed over them, the sampled edges and each level's rows
(n_0 = |V_0| the input rows whose features a batch reads, n_1 = |V_1| the
destinations of the input layer's block) and the features' width. Per batch, N processes, fp32:

    data parallel, features pulled:  (N - 1) / N * |V_0| * F * 4
                                     (the paper counts |V_0| * F * 4)
    P³, activations pushed and pulled: forward (N - 1) * |V_1| * h * 4,
                                     backward the same; features 0
    P³'s structure push (not in the paper's count):
                                     (N - 1) * (|E_1| + |V_1|) * 4

These are formulas at measured sizes: both exchanges are built and measured
by bench/minibatch_mpi.py (modes "P³" and "feature pull", docs/MiniBatch.md).
Prints a Markdown table.
"""

import argparse
import json
import os
import sys

MIB = 2**20


def rows_for(name, v0, v1, e1, F, h, processes):
    out = []
    for n in processes:
        dp = (n - 1) / n * v0 * F * 4
        p3 = 2 * (n - 1) * v1 * h * 4
        structure = (n - 1) * (e1 + v1) * 4
        out.append(f"| {name} | {n} | {v0:,.0f} | {v1:,.0f} | {F} | {h} | "
                   f"{dp / MIB:,.2f} | {p3 / MIB:,.2f} | {structure / MIB:,.2f} | "
                   f"{dp / p3:,.2f}× |")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--processes", default="2,4,8,16")
    args = ap.parse_args(argv)
    processes = [int(n) for n in args.processes.split(",")]
    lines = [
        "| graph | N | \\|V_0\\| per batch | \\|V_1\\| per batch | F | h | "
        "data parallel: features pulled MiB | P³: activations fwd + bwd MiB | "
        "P³: structure pushed MiB | data parallel / P³ |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    # The paper's worked example: OGB-Products, 1000 targets, fanouts
    # (25, 10), F = 100, hidden 16, 4 machines (|E_1| about 10 |V_1|).
    lines += rows_for("P³ §3.7 example", 188339, 24703, 10 * 24703, 100, 16,
                      [4])
    for path in args.runs:
        with open(path) as f:
            s = json.load(f)
        mb = s.get("mini_batch")
        if not mb or "level_rows" not in mb:
            sys.exit(f"{path}: no mini_batch.level_rows (a mini-batch run of "
                     f"this gnnc)")
        batches = mb["batches"]
        v0, v1 = mb["level_rows"][0] / batches, mb["level_rows"][1] / batches
        e1 = mb["sampled_edges"] / batches
        features = mb["features"]
        lines += rows_for(s.get("dataset", os.path.basename(path)), v0, v1, e1,
                          features, args.hidden, processes)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
