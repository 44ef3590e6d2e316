#!/usr/bin/env python3
"""Mini-batch training on several processes (issue 21): data parallel,
P³ and GraNNDis's co-batches, run, on the benchmark's GraphSAGE-mean
(F -> 256 -> C, fanouts 25,10, batch 1024).

For each graph: the executable alone (2 threads), then under mpirun on N
ranks (1 thread each) data parallel (every rank holds every feature and
trains its seeds' share of each batch) and P³ (--partition features: each
rank holds its F/N feature columns of every vertex, computes layer 1 of
every rank's share on them, and the sync pulls each share's 256-wide
partial rows to its owner and pushes the gradient back) and co-batches
(--partition rows: GraNNDis's fetch-then-split, each batch's whole
subgraph split by rows, the row-partitioned program's collectives moving
rows between the ranks; docs/MiniBatch.md), and the run alone and
co-batches with GraNNDis's expansion-aware sampling (1 hop, 15 external
neighbours per expanded vertex) instead of the fanouts. "co-batch per
server": two servers of N / 2 ranks (--server-processes; servers of one
rank when N is odd), each a co-batch
of half of every batch's seeds split by rows over its ranks, the
gradients summed over all: GraNNDis's hierarchy, fetch-then-split within
a server and data parallel across servers.
Dropout off, so the three give the same losses up to summation order
(the table gives the largest relative difference from the run alone:
float32 sums in another order, over every optimizer step of the run). Per run: the median epoch after the
first, rank 0's bytes per batch by collective, P³'s all-to-all bytes
against its formula (the shares' level-1 rows times 256 x 4, from the
summary's mini_batch.p3), rank 0's largest batch state (the summary's
mini_batch.peak_batch_bytes: the batch's graph, features and activations
by the program's buffer records, the staged collectives' buffers: GD-5's
per-GPU memory, split-then-fetch against fetch-then-split for the same
targets) and rank 0's peak RSS.

Not a speed test: 2 cores, N ranks share them and the memory bus. What to
read is the bytes (P³ moves activations, data parallel nothing but
gradients here because every rank holds every feature: the feature-pulling
variant, --partition pull, holds its rows of the features and pulls the
other input rows of its share from their owners: DistDGL's data parallel,
what P³ is compared with) and the memory (P³'s ranks hold F/N columns,
feature pull's V/N rows).

    bench/minibatch_mpi.py [--graphs arxiv[,reddit]] [--processes 2]
                           [--epochs 2] [--out minibatch-mpi]

Writes docs/benchmarks/<out>.{json,md}.
"""

import argparse
import datetime
import json
import os
import statistics
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(ROOT, "python"))

import run as harness  # noqa: E402

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
HIDDEN = 256
MODES = ("alone", "data parallel", "feature pull", "feature pull 2 copies", "P³",
         "P³ hash structure", "co-batch", "co-batch per server", "alone EAS", "co-batch EAS", "alone pipelined",
         "P³ pipelined")
# The runs each mode's losses are compared with: EAS samples other batches,
# and --pipeline trains at stale parameters (delayed SGD).
BASE = {"alone EAS": "alone EAS", "co-batch EAS": "alone EAS",
        "alone pipelined": "alone pipelined", "P³ pipelined": "alone pipelined"}
# GraNNDis's expansion-aware sampling (its defaults: 1 hop, 15 external
# neighbours per expanded vertex) instead of the fanouts.
EAS = ["--preload-hops", "1", "--preload-fanout", "15"]


def compile_rows(data):
    """The model compiled with gnn-compile --partition rows: the executable
    of co-batches since before the default one trained them where its rows
    program replicates levels (it now holds one that does not, beside it),
    kept so that the co-batch rows compare across the reports."""
    from gnnc import toolchain
    exe = os.path.join(harness.CACHE, "bin",
                       f"sage-rows-{os.path.basename(os.path.normpath(data))}")
    toolchain.compile(harness.gnnc_program("sage"), exe,
                      ["--dataset", data, "--partition", "rows"])
    return exe


def run(tag, cmd, threads, timeout):
    out = os.path.join(harness.LOG_DIR, f"mbmpi-{tag}.json")
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = harness.run_process(cmd + ["--json", out], env,
                            os.path.join(harness.LOG_DIR, f"mbmpi-{tag}.log"), timeout, 0)
    if r["status"] != "ok":
        return r
    with open(out) as f:
        s = json.load(f)
    hist = s["history"]
    ms = [h["ms"] for h in hist]
    comm = s.get("communication", {})
    batches = s["mini_batch"]["batches"]
    per_batch = {k: v["bytes"] / batches for k, v in comm.items()
                 if isinstance(v, dict) and "bytes" in v and v["bytes"]}
    # Rank 0's time inside blocking collectives, issues and waits, per epoch.
    blocked = sum(v["seconds"] for v in comm.values()
                  if isinstance(v, dict) and "seconds" in v) + comm.get("wait_seconds", 0)
    cell = dict(r, epoch_ms=statistics.median(ms[1:] if len(ms) > 1 else ms),
                comm_s=blocked / len(hist),
                losses=[h["loss"] for h in hist], test_acc=s["final"]["test_acc"],
                batches=batches, bytes_per_batch=per_batch,
                peak_rss_mib=s["memory"]["peak_resident_bytes"] / 2**20,
                batch_mib=s["mini_batch"].get("peak_batch_bytes", 0) / 2**20)
    p3 = s["mini_batch"].get("p3")
    if p3:
        n = comm["world_size"]
        own, other = p3["own_share_rows"][1], p3["other_share_rows"][1]
        cell["p3_formula"] = 4 * HIDDEN * (other + (n - 1) * own)
        cell["p3_measured"] = comm["alltoall"]["bytes"]
        cell["p3_v1_per_share"] = own / batches
    pull = s["mini_batch"].get("pull")
    if pull:
        cell["pull_rows_per_batch"] = pull["pulled_rows"] / batches
        cell["input_rows_per_batch"] = (pull["pulled_rows"] + pull["own_rows"]) / batches
        cell["pull_feature_bytes_per_batch"] = (pull["pulled_rows"] *
                                                s["mini_batch"]["features"] * 4 / batches)
    return cell


def loss_difference(a, b):
    """The largest relative difference of two loss curves."""
    if len(a) != len(b):
        return float("inf")
    return max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))


def main(argv=None):
    if argv is None and sys.argv[1:2] == ["--report"]:  # rewrite the tables from the JSON
        with open(sys.argv[2]) as f:
            result = json.load(f)
        base = {(c["graph"], c["mode"]): c.get("losses") for c in result["cells"]}
        for c in result["cells"]:
            b = base.get((c["graph"], BASE.get(c["mode"], "alone")))
            if b and "losses" in c:
                c["loss_difference"] = loss_difference(b, c["losses"])
        write(result, os.path.splitext(os.path.basename(sys.argv[2]))[0])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="arxiv")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--out", default="minibatch-mpi")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="the runs to make; the others are kept from the report's JSON")
    args = ap.parse_args(argv)
    os.makedirs(harness.LOG_DIR, exist_ok=True)
    n = args.processes
    result = {"when": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
              "command": " ".join(sys.argv[1:]), "machine": harness.machine_info(),
              "processes": n, "cells": []}
    modes = args.modes.split(",")
    old = os.path.join(ROOT, "docs", "benchmarks", args.out + ".json")
    kept = []
    if set(modes) != set(MODES) and os.path.exists(old):
        with open(old) as f:
            kept = [c for c in json.load(f)["cells"] if c["mode"] not in modes]
    for key in args.graphs.split(","):
        data = harness.ensure_graph(key)
        exe = harness.compile_gnnc("sage", data)  # holds the plain and P³ programs
        rows_exe = compile_rows(data)
        base = [exe, "--data", data, "--epochs", str(args.epochs), "--batch-size", "1024",
                "--dropout", "0", "--quiet", "--eval-every", str(args.epochs)]
        common = base + ["--fanouts", "25,10"]
        runs = {
            "alone": (common + ["--threads", "2"], 2),
            "data parallel": (MPIRUN + ["-np", str(n)] + common + ["--threads", "1"], 1),
            "feature pull": (MPIRUN + ["-np", str(n)] + common + ["--threads", "1",
                                                                   "--partition", "pull"], 1),
            "feature pull 2 copies": (MPIRUN + ["-np", str(n)] + common + [
                "--threads", "1", "--partition", "pull", "--feature-copies", "2"], 1),
            "P³": (MPIRUN + ["-np", str(n)] + common + ["--threads", "1", "--partition",
                                                         "features"], 1),
            # P³ with the structure partitioned by hash: each hop pushed
            # by the rows' owners (all-gathers), the shard held.
            "P³ hash structure": (MPIRUN + ["-np", str(n)] + common + [
                "--threads", "1", "--partition", "features", "--structure", "hash"], 1),
            "co-batch": (MPIRUN + ["-np", str(n), rows_exe] + common[1:] +
                         ["--threads", "1", "--partition", "rows"], 1),
            # Two servers of n / 2 processes, each its co-batch of half the seeds.
            "co-batch per server": (MPIRUN + ["-np", str(n), rows_exe] + common[1:] +
                                    ["--threads", "1", "--partition", "rows",
                                     "--server-processes", str(max(n // 2, 1))], 1),
            "alone EAS": (base + EAS + ["--threads", "2"], 2),
            "co-batch EAS": (MPIRUN + ["-np", str(n), rows_exe] + base[1:] + EAS +
                             ["--threads", "1", "--partition", "rows"], 1),
            "alone pipelined": (common + ["--threads", "2", "--pipeline"], 2),
            "P³ pipelined": (MPIRUN + ["-np", str(n)] + common +
                             ["--threads", "1", "--partition", "features", "--pipeline"], 1),
        }
        cells = {c["mode"]: c for c in kept if c["graph"] == key}
        for mode, (cmd, threads) in runs.items():
            if mode not in modes:
                continue
            harness.log(f"{key}: {mode}")
            cells[mode] = run(f"{key}-{mode.replace(' ', '-')}", cmd, threads, args.timeout)
            harness.log(f"  {cells[mode].get('epoch_ms', cells[mode].get('status'))} ms/epoch")
        for mode in MODES:
            cell = cells.get(mode)
            if cell is None:
                continue
            base = cells.get(BASE.get(mode, "alone"), {}).get("losses")
            if base and "losses" in cell:
                cell["loss_difference"] = loss_difference(base, cell["losses"])
            result["cells"].append(dict(cell, graph=key, mode=mode,
                                        info=harness.graph_info(data)))
    write(result, args.out)
    return 0


def write(result, name):
    out = os.path.join(ROOT, "docs", "benchmarks")
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    m = result["machine"]
    lines = [f"# Mini-batch training on {result['processes']} processes: data parallel, "
             f"P³ and co-batches\n",
             f"`bench/minibatch_mpi.py {result['command']}` ({result['when']}; "
             f"{m['cores']} cores, load average {m['loadavg_start']} at the start). "
             "GraphSAGE-mean F → 256 → C, batch 1024, fanouts 25,10 (EAS: GraNNDis's "
             "expansion-aware sampling instead, 1 hop, 15 external neighbours per "
             "expanded vertex; its losses against the EAS run alone; pipelined: --pipeline, "
             "P³'s 2F2B pipeline with staleness 3, its losses against the pipelined run "
             "alone), dropout 0. Bytes are "
             "rank 0's per batch (all-reduce: the gradients; all-to-all: P³'s partial rows "
             "and gradients, feature pull's requests and the feature rows it gives; "
             "all-gather: feature pull's every row for the evaluation, the hash structure's pushes; broadcast and reduce-scatter: co-batches' rows, and P³'s "
             "full-graph evaluation), over the whole run (the evaluation's collectives "
             "spread over the batches). A batch's state: its graph, features and "
             "activations on rank 0 by the program's buffer records, the largest over "
             "the batches (mini_batch.peak_batch_bytes). In collectives: rank 0's seconds "
             "per epoch inside blocking collectives, non-blocking issues and waits.\n",
             "| graph | mode | epoch | losses: largest rel. difference from alone | test acc | rank 0 bytes per batch | "
             "P³ all-to-all: measured = formula; feature pull: rows rank 0 pulls | rank 0's largest batch state | rank 0 peak RSS | "
             "in collectives |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in result["cells"]:
        if "epoch_ms" not in c:
            lines.append(f"| {c['graph']} | {c['mode']} | {c.get('status')} | | | | | | | |")
            continue
        b = ", ".join(f"{k} {v / 2**20:.2f} MiB" for k, v in sorted(c["bytes_per_batch"].items()))
        p3 = ""
        if "p3_formula" in c:
            p3 = (f"{c['p3_measured']:,} = {c['p3_formula']:,} B "
                  f"({'equal' if c['p3_measured'] == c['p3_formula'] else 'DIFFERENT'}; "
                  f"|V_1| {c['p3_v1_per_share']:,.0f} per share and batch)")
        if "pull_rows_per_batch" in c:
            p3 = (f"{c['pull_rows_per_batch']:,.0f} of its share's "
                  f"{c['input_rows_per_batch']:,.0f} input rows per batch "
                  f"({c['pull_rows_per_batch'] / max(c['input_rows_per_batch'], 1):.0%}), "
                  f"{c['pull_feature_bytes_per_batch'] / 2**20:.2f} MiB of features")
        lines.append(f"| {c['graph']} | {c['mode']} | {c['epoch_ms'] / 1e3:.2f} s | "
                     f"{format(c['loss_difference'], '.1e') if 'loss_difference' in c else '-'} | "
                     f"{c['test_acc']:.4f} | "
                     f"{b or '-'} | {p3 or '-'} | {c.get('batch_mib', 0):.1f} MiB | "
                     f"{c['peak_rss_mib']:.0f} MiB | "
                     f"{format(c['comm_s'], '.2f') + ' s' if 'comm_s' in c else '-'} |")
    with open(os.path.join(out, name + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
