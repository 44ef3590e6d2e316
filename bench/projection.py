#!/usr/bin/env python3
"""Scale-out projection (issue 19): GCN's epoch on 8 to 64 ranks at 25 and
100 Gb/s, for arxiv-, Reddit- and papers100M-shaped graphs, from what
bench/distributed.py measured here, set beside the seeds' published figures.

The model of a rank (each a machine with this one's compute rate: the
measured single-process epoch at 2 threads):

- compute: the single-process epoch (the faster of the two executables run
  alone) times the share of the work a rank
  does. Rows (MG-GCN): its 1/N of the vertices and edges (balanced parts
  assumed: RMAT's skew makes the real maximum larger; ROC's partitioner is
  what fixes that). Preload (GraNNDis): its closure's share of the edges,
  computed here on the graph for rank 0's range (the first N-th of the ids).
  The single-process epoch of the papers100M-shaped graph is extrapolated
  from the two measured ones by a fit t = a E + b V F (edge work and the
  first layer's dense work);
- communication, per epoch and rank, from the compiled program's collective
  records (gnn-compile --partition rows -emit=mlir-llvm: the training step's
  row collectives and widths s): rows: sum over them of (N - 1)/N n s 4
  bytes received; both modes: the gradients' all-reduce, 2 (N - 1)/N 4 P
  (ring); time = bytes / link + 20 us per collective step (N stages of a
  staged SpMM, log2 N for the others);
- epoch = compute + communication (MG-GCN's overlap would hide the smaller
  of the two per staged SpMM: the column "overlap" takes max instead).

A second table projects GIN split by rows against split by feature columns
(P³, gnn-compile --partition features) the same way, from the single-process
GIN epochs of docs/benchmarks/features*.json and the two programs'
collective records (the weight shards' gradients not summed).

Not a measurement: one machine with 2 cores cannot show 64 ranks. The
projection says which mode the volumes favour where, and by how much.

Usage: bench/projection.py   (after bench/distributed.py --reddit)
Writes docs/benchmarks/projection.{json,md}.
"""

import json
import math
import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "bench", ".cache")
COMPILER = os.path.join(ROOT, "build", "bin", "gnn-compile")
GRAPHS = {
    "arxiv": os.path.join(CACHE, "rmat-arxiv-169343-2900000"),
    "reddit": os.path.join(CACHE, "rmat-reddit-232965-119000000"),
}
# papers100M's shape (OGB): no graph here, its counts only.
PAPERS = {"num_vertices": 111_059_956, "num_edges": 1_615_685_872 * 2,
          "num_features": 128, "num_classes": 172}
LINKS = {"25 Gb/s": 25e9 / 8, "100 Gb/s": 100e9 / 8}
RANKS = (8, 16, 32, 64)
STEP_LATENCY = 20e-6
# The seeds' published figures (DIGEST-mggcn-granndis-p3.md), for context:
# other hardware (GPUs, NVLink, 10 Gb/s Ethernet), other models.
SEEDS = [
    ("MG-GCN Table 3", "Reddit, 2 x 16 GCN, A100", "1 GPU 0.033 s, 8 GPUs 0.012 s"),
    ("MG-GCN Table 3", "papers100M, 3 x 208 GCN, 8 A100", "2.89 s"),
    ("GraNNDis Table 4", "arxiv / products / Reddit, 3-56 layers", "1.23-1.95x over full-graph FG"),
    ("P3 Table 4", "papers100M GCN, 4 machines, 10 Gb/s", "2.606 s (DGL 9.575 s)"),
]


def log(msg):
    print(f"[projection] {msg}", flush=True)


def collectives(data, model="gcn", mode="rows"):
    """The training step's row collectives of `model` compiled for `data`
    split by `mode` (rows, features): [(kind, width)], and the floats of
    the parameters whose gradients are summed (features: not the weight
    shards)."""
    out = subprocess.run(
        [COMPILER, os.path.join(ROOT, "examples", "models", f"{model}.mlir"), "--dataset", data,
         "--partition", mode, "-emit=mlir-llvm", "-o", "-"],
        check=True, capture_output=True, text=True).stdout
    info = re.search(r'@gnnrt_model_info\("(.*?)\\00"', out).group(1)
    meta = json.load(open(os.path.join(data, "meta.json")))
    dims = {"F": meta["num_features"], "C": meta["num_classes"], "1": 1}
    found, params = [], 0
    for line in info.split("\\0A"):
        f = line.split()
        if f[:2] == ["collective", "train"]:
            width = int(f[3])
            for t in f[4].split("*"):
                width *= dims[t]
            found.append((f[2], width))
        elif f and f[0] == "param":
            if mode == "features" and f[5:6] == ["-1"]:
                continue  # a weight shard: its gradient is exact on each rank
            n = 1
            for d in f[5:]:
                n *= meta["num_features"] if d == "-1" else meta["num_classes"] if d == "-2" else int(d)
            params += n
    return found, params


def closure_share(data, N, hops=2):
    """Rank 0's closure of `hops` hops (both directions) as a share of the
    edges: what preloading computes on it."""
    indptr = np.load(os.path.join(data, "indptr.npy"))
    indices = np.load(os.path.join(data, "indices.npy"), mmap_mode="r")
    V = len(indptr) - 1
    dst = np.repeat(np.arange(V, dtype=np.int32), np.diff(indptr))
    held = np.zeros(V, bool)
    held[: V // N] = True
    for _ in range(hops):
        front = held.copy()
        held[indices[front[dst]]] = True
        held[dst[front[np.asarray(indices)]]] = True
    edges = np.count_nonzero(held[dst] & held[np.asarray(indices)])
    return edges / len(indices), np.count_nonzero(held) / V


def comm_seconds(colls, params, n, N, bw):
    """A rank's communication per epoch: (N - 1)/N n s 4 bytes per row
    collective of width s, the ring all-reduce of the summed gradients, 20
    us per collective step."""
    nbytes = sum((N - 1) / N * n * w * 4 for _, w in colls) + 2 * (N - 1) / N * 4 * params
    steps = sum(N if k in ("broadcast", "reduce") else math.ceil(math.log2(N))
                for k, _ in colls) + math.log2(N)
    return nbytes / bw + steps * STEP_LATENCY, nbytes


def feature_projection(shapes):
    """GIN split by rows and by feature columns (P³): the same compute per
    rank (1/N of the edges at full width, or every edge at 1/N of the
    columns, and 1/N of the rows after), the two programs' collectives.
    The single-process GIN epochs come from docs/benchmarks/features*.json
    (bench/distributed.py --models gin --modes rows,features); the
    papers100M-shaped one is extrapolated by t = a E F + b V F."""
    alone = {}
    for name in ("features.json", "features-reddit.json"):
        path = os.path.join(ROOT, "docs", "benchmarks", name)
        if not os.path.exists(path):
            return ["", f"(GIN rows against features: {name} missing; run bench/distributed.py "
                        "--models gin --modes rows,features first.)"]
        for r in json.load(open(path))["results"]:
            if r["model"] == "gin" and r["ranks"] == 1:
                alone[r["graph"]] = min(alone.get(r["graph"], math.inf), r["median_epoch_ms"] / 1e3)
    if set(alone) != set(GRAPHS):
        return ["", "(GIN rows against features: a graph's single-process epoch is missing.)"]
    # GIN aggregates the raw F-wide rows over every edge: t = a E F + b V F.
    A = np.array([[shapes[g]["num_edges"] * shapes[g]["num_features"],
                   shapes[g]["num_vertices"] * shapes[g]["num_features"]] for g in GRAPHS], float)
    a, b = np.linalg.solve(A, np.array([alone[g] for g in GRAPHS]))
    alone["papers100M"] = (a * PAPERS["num_edges"] + b * PAPERS["num_vertices"]) * PAPERS["num_features"]
    plans = {(g, m): collectives(p, "gin", m) for g, p in GRAPHS.items()
             for m in ("rows", "features")}
    for m in ("rows", "features"):
        plans[("papers100M", m)] = plans[("arxiv", m)]  # F = 128, hidden 16
    lines = ["", "## GIN: row against feature partitioning (P³)", "",
             "GIN sums the raw features before its first contraction, so rows move F columns of "
             "every vertex in layer 1 and feature partitioning moves 16-wide partials "
             "(docs/Distributed.md). Same compute per rank in both; single-process GIN epochs "
             f"measured (arxiv {alone['arxiv']:.2f} s, Reddit {alone['reddit']:.2f} s), "
             f"papers100M's extrapolated by t = a E F + b V F ({alone['papers100M']:.1f} s).", "",
             "| graph | ranks | link | rows: epoch (s) | rows: MB/rank | features: epoch (s) | "
             "features: MB/rank |", "|---|---|---|---|---|---|---|"]
    for g in ("arxiv", "reddit", "papers100M"):
        n = shapes[g]["num_vertices"]
        for N in RANKS:
            for link, bw in LINKS.items():
                cells = []
                for m in ("rows", "features"):
                    colls, params = plans[(g, m)]
                    t, nbytes = comm_seconds(colls, params, n, N, bw)
                    cells += [f"{alone[g] / N + t:.3f}", f"{nbytes / 1e6:.1f}"]
                lines.append(f"| {g} | {N} | {link} | " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    measured = json.load(open(os.path.join(ROOT, "docs", "benchmarks", "distributed.json")))
    # The single-process epoch: the faster of the two executables' (they
    # compute the same alone; the machine is shared and noisy).
    alone = {}
    for r in measured["results"]:
        if r["model"] == "gcn" and r["ranks"] == 1:
            alone[r["graph"]] = min(alone.get(r["graph"], math.inf), r["median_epoch_ms"])
    if "reddit" not in alone:
        raise SystemExit("run bench/distributed.py --reddit first")
    shapes, epoch1 = {}, {}
    for g, path in GRAPHS.items():
        shapes[g] = json.load(open(os.path.join(path, "meta.json")))
        epoch1[g] = alone[g] / 1e3
    # t = a E + b V F through the two measured graphs.
    A = np.array([[shapes[g]["num_edges"], shapes[g]["num_vertices"] * shapes[g]["num_features"]]
                  for g in GRAPHS], float)
    a, b = np.linalg.solve(A, np.array([epoch1[g] for g in GRAPHS]))
    shapes["papers100M"] = PAPERS
    epoch1["papers100M"] = a * PAPERS["num_edges"] + b * PAPERS["num_vertices"] * PAPERS["num_features"]
    plan = {g: collectives(p) for g, p in GRAPHS.items()}
    plan["papers100M"] = plan["arxiv"]  # the same widths: F = 128, hidden 16 (C differs slightly)
    rows_out = []
    for g, shape in shapes.items():
        n = shape["num_vertices"]
        colls, params = plan[g]
        for N in RANKS:
            share = closure_share(GRAPHS[g], N) if g in GRAPHS else (None, None)
            ar_bytes = 2 * (N - 1) / N * 4 * params
            row_bytes = sum((N - 1) / N * n * w * 4 for _, w in colls)
            row_steps = sum(N if k == "broadcast" else math.ceil(math.log2(N)) for k, _ in colls)
            for link, bw in LINKS.items():
                comp_rows = epoch1[g] / N
                comm_rows = (row_bytes + ar_bytes) / bw + (row_steps + math.log2(N)) * STEP_LATENCY
                entry = {
                    "graph": g, "ranks": N, "link": link, "single_epoch_s": epoch1[g],
                    "rows_compute_s": comp_rows, "rows_comm_s": comm_rows,
                    "rows_epoch_s": comp_rows + comm_rows,
                    "rows_overlap_epoch_s": max(comp_rows, comm_rows),
                    "rows_bytes_per_rank": row_bytes + ar_bytes,
                }
                if share[0] is not None:
                    comp_pre = epoch1[g] * share[0]
                    comm_pre = ar_bytes / bw + math.log2(N) * STEP_LATENCY
                    entry.update(preload_edge_share=share[0], preload_vertex_share=share[1],
                                 preload_epoch_s=comp_pre + comm_pre,
                                 preload_bytes_per_rank=ar_bytes)
                rows_out.append(entry)
                log(f"{g} N={N} {link}: rows {entry['rows_epoch_s']:.3f} s "
                    f"(comm {comm_rows:.3f}), preload "
                    f"{entry.get('preload_epoch_s', float('nan')):.3f} s")
    out_dir = os.path.join(ROOT, "docs", "benchmarks")
    with open(os.path.join(out_dir, "projection.json"), "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "fit": {"a_s_per_edge": a, "b_s_per_vf": b},
                   "collectives": {g: plan[g][0] for g in plan}, "rows": rows_out}, f, indent=1)
    lines = [
        "# Scale-out projection: GCN on 8-64 ranks",
        "",
        f"`bench/projection.py` ({time.strftime('%Y-%m-%d')}) from `distributed.json`'s "
        "single-process GCN epochs (2 threads) and the compiled program's collective records; "
        "the model is in the script's docstring. papers100M's single-process epoch is "
        f"extrapolated: t = {a:.3g} s x E + {b:.3g} s x V F. Preload: rank 0's 2-hop closure "
        "share of the edges on the graph itself (not available for papers100M: no graph here).",
        "",
        "Row collectives of the training step (kind, width): " + "; ".join(
            f"{g}: " + ", ".join(f"{k} {w}" for k, w in plan[g][0]) for g in GRAPHS) + ".",
        "",
        "| graph | ranks | link | 1 process (s) | rows: epoch (s) | rows: comm share | "
        "rows, overlapped (s) | rows: MB/rank | preload: closure edges | preload: epoch (s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in rows_out:
        pre_share = f"{100 * e['preload_edge_share']:.0f} %" if "preload_edge_share" in e else "n/a"
        pre = f"{e['preload_epoch_s']:.3f}" if "preload_epoch_s" in e else "n/a"
        lines.append(
            f"| {e['graph']} | {e['ranks']} | {e['link']} | {e['single_epoch_s']:.3f} | "
            f"{e['rows_epoch_s']:.3f} | {100 * e['rows_comm_s'] / e['rows_epoch_s']:.0f} % | "
            f"{e['rows_overlap_epoch_s']:.3f} | {e['rows_bytes_per_rank'] / 1e6:.1f} | "
            f"{pre_share} | {pre} |")
    lines += ["", "The seeds' published figures (other hardware and models; for scale):", "",
              "| source | setting | figure |", "|---|---|---|"]
    lines += [f"| {s} | {w} | {f} |" for s, w, f in SEEDS]
    lines += feature_projection(shapes)
    with open(os.path.join(out_dir, "projection.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    log("wrote docs/benchmarks/projection.{json,md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
