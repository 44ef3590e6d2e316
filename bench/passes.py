#!/usr/bin/env python3
"""What the SAGA passes buy, measured in one run (2 threads by default).

- Hoisting (G-GCN, NeuGraph eq. 1-2, F -> 128 -> C): the matmul FLOPs of the
  gates per epoch with the per-edge products (--no-hoist) and with them
  hoisted to the vertices (the drop is |E| / |V|, the average degree), and
  the epoch time of both executables on the same graph.
- Fusion (GAT 4 heads x 64 -> C, GCN F -> 256 -> C): peak RSS and epoch time
  with and without --gnn-fuse-sag on Reddit-shaped graphs (232,965 vertices,
  F = 602, C = 41) at several edge densities: fused, the peak does not grow
  with |E| x F (only the graph's own index arrays grow with |E|); unfused, the
  edge tensors do. Unfused runs whose edge tensors would not fit in the
  memory limit are reported as such, not run.
- Reordering (GCN on the arxiv-shaped graph, F = 128 -> 256 -> 40): the cost
  model's decisions with --dataset and the epoch times with --reorder=never,
  auto and always.
- Edge-scale factoring (GCN F -> 256 -> C): epoch times with --no-factor
  (a per-edge normalisation scalar computed for every aggregation, then a
  weighted SpMM) and without (per-vertex factors, unweighted SpMM), runs
  interleaved, on the arxiv-shaped graph and, with --factor-graphs
  arxiv,reddit, on bench/run.py's Reddit-shaped graph.

Writes docs/benchmarks/passes.{json,md}. Not a test: numbers drift on a
shared machine; comparisons are within one run.

Usage: bench/passes.py [--quick] [--threads T] [--epochs N] [--mem-limit-gb G]
       [--only PART] [--factor-graphs arxiv,reddit] [--reps R]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from gnnc import toolchain, zoo  # noqa: E402
from gnnc.data import rmat, save  # noqa: E402
from gnnc.printer import to_mlir  # noqa: E402

CACHE = os.path.join(ROOT, "bench", ".cache")
OUT = os.path.join(ROOT, "docs", "benchmarks")


def log(msg):
    print(f"[passes] {msg}", flush=True)


def dataset(name, V, draws, F, C):
    path = os.path.join(CACHE, name)
    if not os.path.exists(os.path.join(path, "meta.json")):
        log(f"generating {name} (RMAT, {V} vertices, {draws} draws, F={F}, C={C})")
        t0 = time.time()
        save(rmat(V, draws, num_features=F, num_classes=C, seed=1, name=name), path)
        log(f"  done in {time.time() - t0:.0f} s")
    with open(os.path.join(path, "meta.json")) as f:
        meta = json.load(f)
    return path, meta["num_vertices"], meta["num_edges"]


def run(exe, data, epochs, threads, limit_bytes=None):
    """Runs one training; returns (median epoch ms, peak RSS bytes) or an
    error string."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, "s.json")
        cmd = [exe, "--data", data, "--epochs", str(epochs), "--threads", str(threads),
               "--eval-every", str(epochs), "--json", summary, "--quiet"]
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))

        def limit():
            if limit_bytes:
                import resource
                resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, preexec_fn=limit)
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read().decode()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            return f"failed ({proc.returncode}): {err.strip().splitlines()[-1] if err.strip() else ''}"
        with open(summary) as f:
            s = json.load(f)
    ms = [h["ms"] for h in s["history"][1:]] or [s["history"][0]["ms"]]
    return statistics.median(ms), usage.ru_maxrss * 1024, s["buffer_bytes"]


def compile_model(program, tag, flags):
    path = os.path.join(CACHE, "passes-bin", tag)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return toolchain.compile(program, path, flags=flags)


def hoisting(args, results):
    V, draws = (40000, 600000) if args.quick else (169343, 2900000)
    data, V, E = dataset(f"rmat-arxiv-{V}-{draws}", V, draws, 128, 40)
    hidden = 128
    # Gate products per layer: 2 (W_H, W_C) x 2 d^2 FLOPs per row, forward;
    # the backward has up to two per forward one (input and weight
    # gradients; layer 1's input needs none): about 3x the forward.
    dims = [128, hidden]
    per_row = sum(2 * 2 * d * d for d in dims)
    flops = {"no-hoist": 3 * per_row * E, "hoist": 3 * per_row * V}
    row = {"graph": os.path.basename(data), "V": V, "E": E, "avg_degree": E / V,
           "gate_gflop_per_epoch": {k: v / 1e9 for k, v in flops.items()},
           "flop_ratio": flops["no-hoist"] / flops["hoist"]}
    for tag, flags in (("hoist", []), ("no-hoist", ["--no-hoist"])):
        exe = compile_model(zoo.ggcn(hidden=hidden), f"ggcn-{tag}", flags)
        epochs = args.epochs if tag == "hoist" else min(args.epochs, 3)
        r = run(exe, data, epochs, args.threads)
        log(f"G-GCN {tag}: {r}")
        row[tag] = r if isinstance(r, str) else {"epoch_ms": r[0], "peak_rss_mb": r[1] / 2**20}
    if isinstance(row["hoist"], dict) and isinstance(row["no-hoist"], dict):
        row["speedup"] = row["no-hoist"]["epoch_ms"] / row["hoist"]["epoch_ms"]
    results["hoisting"] = row


def fusion(args, results):
    V = 232965
    fractions = [1 / 64, 1 / 16] if args.quick else [1 / 64, 1 / 16, 1 / 4]
    if args.fractions:
        fractions = [eval(f, {}) for f in args.fractions.split(",")]
    limit = int(args.mem_limit_gb * 2**30)
    rows = []
    for frac in fractions:
        draws = int(114_000_000 / 2 * frac)  # symmetrising doubles the draws
        data, V, E = dataset(f"rmat-reddit-{V}-{draws}", V, draws, 602, 41)
        for name, program in (("gat", zoo.gat(heads=4, hidden=64)), ("gcn", zoo.gcn(hidden=256))):
            for tag, flags in (("fused", []), ("unfused", ["--no-fuse"])):
                exe = compile_model(program, f"{name}-{tag}", flags)
                width = 4 * 64 if name == "gat" else 602
                # The unfused GAT keeps several |E| x 256 float tensors.
                if tag == "unfused" and name == "gat" and 4 * E * width * 4 > limit:
                    r = "not run: its edge tensors exceed the memory limit"
                elif tag == "unfused" and args.fused_only:
                    continue
                else:
                    r = run(exe, data, args.fusion_epochs, args.threads, limit)
                log(f"{name} {tag} |E|={E}: {r}")
                rows.append({"model": name, "config": tag, "V": V, "E": E,
                             "result": r if isinstance(r, str) else
                             {"epoch_ms": r[0], "peak_rss_mb": r[1] / 2**20,
                              "buffer_mb": r[2] / 2**20}})
    old = results.get("fusion", []) if args.append else []
    results["fusion"] = old + rows


def reordering(args, results):
    V, draws = (40000, 600000) if args.quick else (169343, 2900000)
    data, V, E = dataset(f"rmat-arxiv-{V}-{draws}", V, draws, 128, 40)
    rows = []
    for mode in ("never", "auto", "always"):
        src = os.path.join(CACHE, "gcn256.mlir")
        with open(src, "w") as f:
            f.write(to_mlir(zoo.gcn(hidden=256)))
        p = subprocess.run([toolchain.find_tool("gnn-compile"), src, "--dataset", data,
                            f"--reorder={mode}", "--remarks", "-emit=mlir", "-o", os.devnull],
                           capture_output=True, text=True, check=True)
        decisions = [re.sub(r"^.*remark: ", "", l) for l in p.stderr.splitlines()
                     if "aggregation" in l]
        exe = compile_model(zoo.gcn(hidden=256), f"gcn-reorder-{mode}",
                            ["--dataset", data, f"--reorder={mode}"])
        r = run(exe, data, args.epochs, args.threads)
        log(f"GCN reorder={mode}: {r}; {decisions}")
        rows.append({"mode": mode, "decisions": decisions,
                     "epoch_ms": r[0] if not isinstance(r, str) else r})
    results["reordering"] = {"graph": os.path.basename(data), "V": V, "E": E, "runs": rows}


def factoring(args, results):
    graphs = []
    for name in args.factor_graphs.split(","):
        if name == "arxiv":
            V, draws = (40000, 600000) if args.quick else (169343, 2900000)
            graphs.append(dataset(f"rmat-arxiv-{V}-{draws}", V, draws, 128, 40)[0])
        elif name == "reddit":
            path = os.path.join(CACHE, "rmat-reddit-232965-119000000")
            if not os.path.exists(os.path.join(path, "meta.json")):
                log("factoring: no Reddit-shaped graph (bench/run.py --make-graph reddit)")
                continue
            graphs.append(path)
        else:
            raise SystemExit(f"--factor-graphs: unknown graph '{name}' (arxiv, reddit)")
    rows = []
    for data in graphs:
        with open(os.path.join(data, "meta.json")) as f:
            meta = json.load(f)
        times = {"factored": [], "no-factor": []}
        exes = {tag: compile_model(zoo.gcn(hidden=256), f"gcn-{tag}-{os.path.basename(data)}",
                                   ["--dataset", data] + (["--no-factor"] if tag == "no-factor"
                                                          else []))
                for tag in times}
        for rep in range(args.reps):
            for tag in times:  # interleaved: drift hits both alike
                r = run(exes[tag], data, args.epochs, args.threads)
                log(f"GCN {tag} {os.path.basename(data)} rep {rep + 1}: {r}")
                if not isinstance(r, str):
                    times[tag].append(r[0])
        row = {"graph": os.path.basename(data), "V": meta["num_vertices"],
               "E": meta["num_edges"], "F": meta["num_features"]}
        for tag, ms in times.items():
            row[tag] = statistics.median(ms) if ms else None
        if row["factored"] and row["no-factor"]:
            row["speedup"] = row["no-factor"] / row["factored"]
        rows.append(row)
    results["factoring"] = rows


def markdown(results, args):
    dates = results.get("dates", {})
    parts = [p for p in ("hoisting", "fusion", "reordering", "factoring") if p in results]
    lines = ["# What the SAGA passes buy", "",
             f"`bench/passes.py{' --quick' if args.quick else ''}`, {args.threads} threads; "
             "times are medians over the epochs after the first. Sections measured on "
             + ", ".join(f"{p} {dates.get(p, 'an earlier date')}" for p in parts)
             + " (`--only PART` reruns one section).", ""]
    h = results.get("hoisting")
    if h:
        lines += ["## ApplyEdge hoisting: G-GCN (F=128 -> 128 -> C)", "",
                  f"Graph {h['graph']}: |V| = {h['V']}, |E| = {h['E']} (average degree "
                  f"{h['avg_degree']:.1f}).", "",
                  "| | gate matmul GFLOP / epoch | epoch ms | peak RSS MB |", "|---|---|---|---|"]
        for tag in ("no-hoist", "hoist"):
            r = h[tag]
            cells = (f"{r['epoch_ms']:.0f} | {r['peak_rss_mb']:.0f}" if isinstance(r, dict)
                     else f"{r} | -")
            lines.append(f"| {tag} | {h['gate_gflop_per_epoch'][tag]:.1f} | {cells} |")
        lines += ["", f"FLOP ratio {h['flop_ratio']:.1f} (= the average degree); "
                  f"epoch speedup {h.get('speedup', float('nan')):.1f}x.", ""]
    if results.get("fusion"):
        lines += ["## SAG fusion: peak memory and epoch time (Reddit-shaped vertices, F=602)", "",
                  "| model | config | |E| | epoch ms | peak RSS MB | runtime buffers MB |",
                  "|---|---|---|---|---|---|"]
        for r in results["fusion"]:
            x = r["result"]
            cells = (f"{x['epoch_ms']:.0f} | {x['peak_rss_mb']:.0f} | {x['buffer_mb']:.0f}"
                     if isinstance(x, dict) else f"{x} | - | -")
            lines.append(f"| {r['model']} | {r['config']} | {r['E']} | {cells} |")
        lines += ["", "Fused, the runtime buffers hold |V|-sized tensors plus at most a few "
                  "floats per edge (the per-edge weights of aggregations lowered to the "
                  "SpMM); the peak RSS also grows with |E| by the graph's own arrays (CSC, "
                  "CSR, edge ids), never with |E| x F. Unfused GAT keeps |E| x 256 tensors.",
                  ""]
    ro = results.get("reordering")
    if ro:
        lines += ["## Aggregate reordering: GCN (F=128 -> 256 -> 40)", "",
                  f"Graph {ro['graph']}: |V| = {ro['V']}, |E| = {ro['E']}.", "",
                  "| --reorder | decisions | epoch ms |", "|---|---|---|"]
        for r in ro["runs"]:
            ms = r["epoch_ms"] if isinstance(r["epoch_ms"], str) else f"{r['epoch_ms']:.0f}"
            lines.append(f"| {r['mode']} | {'<br>'.join(r['decisions'])} | {ms} |")
        lines.append("")
    fa = results.get("factoring")
    if fa:
        lines += ["## Edge-scale factoring: GCN (F -> 256 -> C)", "",
                  "Median epoch over the interleaved runs of each executable (`--no-factor`: "
                  "the per-edge normalisation computed for every aggregation and a weighted "
                  "SpMM; factored: per-vertex factors and the unweighted SpMM).", "",
                  "| graph | |V| | |E| | F | no-factor ms | factored ms | speed-up |",
                  "|---|---|---|---|---|---|---|"]
        for r in fa:
            cell = lambda x: "failed" if x is None else f"{x:.0f}"
            sp = f"{r['speedup']:.2f}x" if "speedup" in r else "-"
            lines.append(f"| {r['graph']} | {r['V']} | {r['E']} | {r['F']} | "
                         f"{cell(r['no-factor'])} | {cell(r['factored'])} | {sp} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--fusion-epochs", type=int, default=2)
    parser.add_argument("--mem-limit-gb", type=float, default=16.0)
    parser.add_argument("--only", choices=["hoisting", "fusion", "reordering", "factoring"])
    parser.add_argument("--factor-graphs", default="arxiv",
                        help="factoring runs: comma list of arxiv, reddit (default arxiv)")
    parser.add_argument("--reps", type=int, default=3,
                        help="factoring runs: processes per executable (default 3)")
    parser.add_argument("--fractions", help="edge densities of Reddit's for the fusion "
                        "runs, e.g. 1/64,1/4,1 (default 1/64,1/16,1/4)")
    parser.add_argument("--fused-only", action="store_true",
                        help="fusion runs: skip the unfused executables")
    parser.add_argument("--append", action="store_true",
                        help="fusion runs: add to the rows already in passes.json")
    args = parser.parse_args()
    os.makedirs(CACHE, exist_ok=True)
    results = {}
    path = os.path.join(OUT, "passes.json")
    if args.only and os.path.exists(path):
        with open(path) as f:
            results = json.load(f)
    for part in ("hoisting", "fusion", "reordering", "factoring"):
        if args.only in (None, part):
            globals()[part](args, results)
            results.setdefault("dates", {})[part] = time.strftime("%Y-%m-%d")
    os.makedirs(OUT, exist_ok=True)
    with open(path, "w") as f:
        json.dump(results, f, indent=2)
    with open(os.path.join(OUT, "passes.md"), "w") as f:
        f.write(markdown(results, args))
    log(f"wrote {path} and passes.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
