#!/usr/bin/env python3
"""Multi-process training (issue 19): shared preloading, row and feature
partitioning on 1, 2 and 4 ranks.

For each graph, model and mode (`preload`: GraNNDis' shared preloading,
`rows`: MG-GCN's row partitioning, gnn-compile --partition rows,
`features`: P³'s feature partitioning of layer 1, --partition features,
`auto`: gnn-compile's default, an executable holding all three programs
(the rows one with the levels the per-level plan replicates) that picks
one at start-up, the pick reported; `rows-rK`: row partitioning with the
first K levels replicated, --partition rows --replicate K), one
executable run alone (2 threads) and under mpirun on 2 ranks (1 thread each)
and 4 ranks (1 thread each, oversubscribed on this 2-core machine): the
median epoch, rank 0's time inside collectives (the communication share),
the bytes its collectives moved per epoch against the mode's formula
(preload: 4 P + 4 bytes, the gradients and the loss; rows: that plus the
row collectives, from the program's collective records; features: the same
without the weight shards' gradients;
docs/Distributed.md), every rank's peak RSS, and how many vertices rank 0
holds. The models are compiled with --dataset (so GCN aggregates XW: MG-GCN's
order rule). Graphs:

- grid: a 400 x 400 grid (160,000 vertices, F = 128, 8 classes), where a
  rank's 2-hop closure is its band of rows and two rows on either side: the
  per-rank memory shrinks with the ranks;
- arxiv: the arxiv-shaped RMAT graph (169,343 vertices, 2.4 M edges,
  F = 128, 40 classes; bench/gcn_arxiv.py's), whose 2-hop closure from any
  quarter is nearly the whole graph: every rank holds it all.

- reddit (with --reddit): the Reddit-shaped RMAT graph (232,965 vertices,
  114 M edges, F = 602, 41 classes; bench/passes.py's), GCN only, 3 epochs.

Writes docs/benchmarks/<out>.{json,md} (default distributed). Not a test:
the machine is shared and has 2 cores, so the figures to read are the byte
counts, the communication share and the memory, not speed-ups.

Usage: bench/distributed.py [--epochs N] [--quick] [--reddit]
           [--models gcn,gat,gin] [--modes preload,rows,rows-r1,rows-shared,features,auto]
           [--graphs grid,arxiv,reddit] [--out NAME]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from gnnc.data import from_edges, save  # noqa: E402
from gcn_arxiv import arxiv_dataset  # noqa: E402  (bench/: the same cached graph)

CACHE = os.path.join(ROOT, "bench", ".cache")
COMPILER = os.path.join(ROOT, "build", "bin", "gnn-compile")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
# Each rank's peak RSS: the wrapper runs the program and prints its child's.
RSS_WRAPPER = (
    "import os, resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[1:]).returncode\n"
    "kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(f\"rss rank {os.environ.get('OMPI_COMM_WORLD_RANK', '0')} {kb}\", flush=True)\n"
    "sys.exit(rc)\n")


def log(msg):
    print(f"[bench] {msg}", flush=True)


def grid_dataset(width: int) -> str:
    path = os.path.join(CACHE, f"grid-{width}")
    if os.path.exists(os.path.join(path, "meta.json")):
        return path
    log(f"generating a {width} x {width} grid, F=128, 8 classes")
    rng = np.random.default_rng(1)
    ids = np.arange(width * width).reshape(width, width)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    V = width * width
    features = rng.standard_normal((V, 128)).astype(np.float32)
    labels = (features[:, :8] @ rng.standard_normal((8, 8))).argmax(1)
    ds = from_edges(src, dst, V, features=features, labels=labels, num_classes=8,
                    name=f"grid-{width}", source="bench/distributed.py",
                    symmetrize=True, self_loops=True, seed=1)
    save(ds, path)
    return path


def run(exe, data, ranks, epochs, workdir):
    out = os.path.join(workdir, f"run-{ranks}.json")
    params = os.path.join(workdir, f"params-{ranks}")
    threads = 2 if ranks == 1 else 1
    cmd = [sys.executable, "-c", RSS_WRAPPER, exe, "--data", data, "--epochs", str(epochs),
           "--threads", str(threads), "--dropout", "0", "--eval-every", str(epochs),
           "--quiet", "--json", out, "--save-params", params]
    if ranks > 1:
        cmd = MPIRUN + ["-np", str(ranks)] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{' '.join(cmd)}\n{r.stderr[-2000:]}")
    rss = sorted((int(m.group(1)), int(m.group(2)) * 1024)
                 for m in re.finditer(r"rss rank (\d+) (\d+)", r.stdout))
    summary = json.load(open(out))
    floats = sum(np.load(os.path.join(params, f)).size
                 for f in os.listdir(params) if f.endswith(".npy"))
    comm = summary["communication"]
    kinds = ("allreduce", "broadcast", "reduce_scatter", "allgather")
    seconds = sum(comm[k]["seconds"] for k in kinds) + comm.get("wait_seconds", 0)
    moved = sum(comm[k]["bytes"] for k in kinds)
    evals = sum(1 for h in summary["history"] if "train_acc" in h)
    # The fingerprint, the accuracy counts and --partition auto's vote.
    auto = summary.get("auto", {})
    fixed = 16 + 48 * evals + auto.get("allreduce_bytes", 0) if ranks > 1 else 0
    # The row collectives by the driver's formula (over the run: epochs and
    # evaluations), and the all-reduces (gradients and loss per epoch).
    rows_formula = sum(v["bytes"] for v in comm.get("formula", {}).values())
    # Feature partitioning's weight shards are not summed.
    part = summary.get("partition", {})
    if part.get("shard_floats"):
        floats -= part["shard_floats"] * part["features"] // (
            part["feature_end"] - part["feature_begin"])
    formula = (epochs * (4 * floats + 4) + rows_formula) if ranks > 1 else 0
    times = [h["ms"] for h in summary["history"]]
    return {
        "ranks": ranks, "threads": threads,
        "median_epoch_ms": float(np.median(times)),
        "comm_ms_per_epoch": 1e3 * seconds / epochs,
        "bytes_per_epoch": (moved - fixed) / epochs,
        "formula_bytes_per_epoch": formula / epochs,
        "bytes_by_collective": {k: comm[k]["bytes"] for k in kinds},
        "peak_rss_bytes": [b for _, b in rss],
        "held_vertices": summary.get("partition", {}).get("held_vertices"),
        "held_edges": summary.get("partition", {}).get("held_edges"),
        "final_loss": summary["final"]["loss"],
        "chosen": auto.get("mode"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="smaller graphs")
    parser.add_argument("--reddit", action="store_true",
                        help="also GCN on the Reddit-shaped graph (3 epochs)")
    parser.add_argument("--models", default="gcn,gat")
    parser.add_argument("--modes", default="preload,rows")
    parser.add_argument("--graphs", default="grid,arxiv")
    parser.add_argument("--out", default="distributed",
                        help="docs/benchmarks/OUT.{json,md}")
    args = parser.parse_args()
    os.makedirs(CACHE, exist_ok=True)
    def reddit_dataset():
        path = os.path.join(CACHE, "rmat-reddit-232965-119000000")
        if not os.path.exists(os.path.join(path, "meta.json")):
            raise SystemExit(f"{path}: not generated (run bench/passes.py first)")
        return path

    makers = {"grid": lambda: grid_dataset(120 if args.quick else 400),
              "arxiv": lambda: arxiv_dataset(args.quick),
              "reddit": reddit_dataset}
    graphs = {g: makers[g]() for g in args.graphs.split(",")}
    cases = [(m, g, mode) for m in args.models.split(",") for g in graphs
             for mode in args.modes.split(",")]
    if args.reddit and "reddit" not in graphs:
        graphs["reddit"] = reddit_dataset()
        cases += [("gcn", "reddit", mode) for mode in args.modes.split(",")]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, gname, mode in cases:
            data = graphs[gname]
            epochs = 3 if gname == "reddit" else args.epochs
            exe = os.path.join(tmp, f"{model}-{gname}-{mode}")
            # rows-rK: row partitioning with the first K levels replicated;
            # rows-shared: with --stage-shared-rows.
            replicated = re.fullmatch(r"rows-r(\d+)", mode)
            flags = (["--partition", "rows", "--replicate", replicated.group(1)]
                     if replicated else
                     ["--partition", "rows", "--stage-shared-rows"]
                     if mode == "rows-shared" else ["--partition", mode])
            subprocess.run([COMPILER, os.path.join(ROOT, "examples", "models", f"{model}.mlir"),
                            "--dataset", data, *flags, "-o", exe], check=True)
            meta = json.load(open(os.path.join(data, "meta.json")))
            if True:
                for ranks in (1, 2, 4):
                    work = os.path.join(tmp, f"{model}-{gname}-{mode}-{ranks}")
                    os.makedirs(work)
                    t0 = time.time()
                    r = run(exe, data, ranks, epochs, work)
                    r.update(model=model, graph=gname, mode=mode, epochs=epochs,
                             vertices=meta["num_vertices"], edges=meta["num_edges"])
                    results.append(r)
                    log(f"{model} {gname} {mode} x{ranks}: {r['median_epoch_ms']:.1f} ms/epoch, "
                        f"comm {r['comm_ms_per_epoch']:.2f} ms, {r['bytes_per_epoch']:.0f} B/epoch "
                        f"(formula {r['formula_bytes_per_epoch']}), rss "
                        f"{[round(b / 2**20) for b in r['peak_rss_bytes']]} MiB, "
                        f"held {r['held_vertices']} ({time.time() - t0:.0f} s)")
    out_dir = os.path.join(ROOT, "docs", "benchmarks")
    with open(os.path.join(out_dir, f"{args.out}.json"), "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "epochs": args.epochs,
                   "results": results}, f, indent=1)
    lines = [
        f"# {', '.join(args.modes.split(','))} on 1, 2 and 4 ranks",
        "",
        f"`bench/distributed.py` ({time.strftime('%Y-%m-%d')}), {args.epochs} epochs (Reddit: 3), "
        "dropout off, threads x ranks = 2 (4 ranks: 1 thread each, oversubscribed on 2 cores). "
        "Bytes: what rank 0's collectives counted per epoch (the start-up fingerprint and the "
        "evaluations' accuracy counts taken out; row collectives of the evaluations included) "
        "against the mode's formula (docs/Distributed.md). Rank 0 holds: its vertices and "
        "edges (preload: its closure; rows and features: its own vertices and their in-edges; "
        "features also holds the whole graph and its columns of every vertex's features).",
        "",
        "| model | graph | mode | ranks | epoch ms | in collectives ms (share) | bytes/epoch | formula "
        "| peak RSS per rank (MiB) | rank 0 holds | final loss |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        share = r["comm_ms_per_epoch"] / r["median_epoch_ms"] if r["median_epoch_ms"] else 0
        held = ("all" if r["held_vertices"] is None else
                f"{r['held_vertices']} of {r['vertices']} v, {r['held_edges']} e")
        mode = r["mode"] + (f" → {r['chosen']}" if r.get("chosen") else "")
        lines.append(
            f"| {r['model']} | {r['graph']} | {mode} | {r['ranks']} | {r['median_epoch_ms']:.1f} | "
            f"{r['comm_ms_per_epoch']:.2f} ({100 * share:.0f} %) | {r['bytes_per_epoch']:.0f} | "
            f"{r['formula_bytes_per_epoch']:.0f} | "
            f"{', '.join(str(round(b / 2**20)) for b in r['peak_rss_bytes'])} | {held} | "
            f"{r['final_loss']:.4f} |")
    with open(os.path.join(out_dir, f"{args.out}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    log(f"wrote docs/benchmarks/{args.out}.{{json,md}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
