#!/usr/bin/env python3
"""Mini-batch training against the peers (issue 21): GraphSAGE-mean with
neighbour sampling, gnnc's executable (`--batch-size --fanouts`) beside
DGL's NeighborSampler + DataLoader and PyG's NeighborLoader
(bench/minibatch_peers.py), side by side in one run.

    bench/minibatch.py [--graphs arxiv,reddit] [--systems gnnc,dgl,pyg]
                       [--epochs 3] [--batch-size 1024] [--fanouts 25,10]
                       [--accuracy polblogs] [--seeds 5] [--accuracy-epochs 30]
                       [--output minibatch]

Timing cells (each graph, each system, 2 threads): the median epoch after
the first (an epoch is every batch of the train split: sampling, gathering,
forward, backward, optimizer step), sampled edges per second (the edges of
what the model ran on, over the epoch's time) and the process's peak RSS
(wait4). Accuracy cells: the test accuracy after --accuracy-epochs epochs
(batch 256, the same fanouts, evaluated on the whole graph) over --seeds
seeds; gnnc must be within max(1 point, 2 sigma) of each peer's mean.
Writes docs/benchmarks/OUTPUT.{json,md}. Graphs, executables and the peers'
environment are bench/run.py's.
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

import run as harness  # noqa: E402  (bench/run.py: graphs, programs, cells)


def run_one(system, exe, data, cfg, tag, seed=0):
    out = os.path.join(harness.LOG_DIR, f"mb-{tag}.json")
    if os.path.exists(out):
        os.remove(out)
    os.makedirs(harness.LOG_DIR, exist_ok=True)
    # gnnc-eas: GraNNDis's expansion-aware sampling (its defaults, 1 hop and
    # 15 external neighbours per expanded vertex) instead of the fanouts.
    sampling = (["--preload-hops", "1", "--preload-fanout", "15"] if system == "gnnc-eas"
                else ["--fanouts", cfg["fanouts"]])
    common = ["--data", data, "--epochs", str(cfg["epochs"]), "--threads", "2",
              "--batch-size", str(cfg["batch_size"])] + sampling + [
              "--seed", str(seed), "--json", out]
    if system.startswith("gnnc"):
        cmd = [exe] + common + ["--eval-every", str(cfg["epochs"]), "--quiet"]
    else:
        cmd = [harness.PEERS_PY, os.path.join(BENCH, "minibatch_peers.py"),
               "--system", system] + common
    env = dict(os.environ, OMP_NUM_THREADS="2", MKL_NUM_THREADS="2", DGLBACKEND="pytorch")
    # --blas-core native: OpenBLAS (gnnc's GEMMs; PyTorch's are MKL's) picks
    # the CPU's own kernels, whatever the environment forced.
    if cfg.get("blas_core") == "native":
        env.pop("OPENBLAS_CORETYPE", None)
    r = harness.run_process(cmd, env, os.path.join(harness.LOG_DIR, f"mb-{tag}.log"),
                            cfg["timeout"], 0)
    try:
        with open(out) as f:
            s = json.load(f)
    except (OSError, ValueError):
        s = {}
    if "unavailable" in s:
        return {"status": "unavailable", "error": s["unavailable"]}
    if r["status"] != "ok":
        return r
    hist = s["history"]
    ms = [h["ms"] for h in hist]
    if system.startswith("gnnc"):
        edges = s["mini_batch"]["sampled_edges"] / max(len(hist), 1)
        batches = s["mini_batch"]["batches"] / max(len(hist), 1)
    else:
        edges = statistics.mean(h["sampled_edges"] for h in hist)
        batches = hist[0]["batches"]
    steady = ms[1:] if len(ms) > 1 else ms
    epoch_ms = statistics.median(steady)
    return dict(r, epoch_ms=epoch_ms, all_ms=ms, sampled_edges=edges, batches=batches,
                edges_per_s=edges / (epoch_ms / 1e3), test_acc=s["final"]["test_acc"],
                version=s.get("version"), blas_kernels=s.get("blas_kernels"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="arxiv")
    ap.add_argument("--systems", default="gnnc,dgl,pyg")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--fanouts", default="25,10")
    ap.add_argument("--accuracy", default="polblogs", help="graph of the accuracy cells ('' none)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--accuracy-epochs", type=int, default=30)
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--output", default="minibatch")
    ap.add_argument("--blas-core", choices=("inherit", "native"), default="inherit",
                    help="inherit the environment's OPENBLAS_CORETYPE, or unset it for "
                         "every system so that OpenBLAS picks the CPU's kernels")
    args = ap.parse_args(argv)
    systems = args.systems.split(",")
    peers = harness.ensure_peers(skip_setup=True)
    peer_note = peers
    if any(not s.startswith("gnnc") for s in systems) and not os.path.exists(harness.PEERS_PY):
        systems = [s for s in systems if s.startswith("gnnc")]
    result = {"when": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
              "command": " ".join(sys.argv[1:]), "machine": harness.machine_info(),
              "peers": peer_note, "timing": [], "accuracy": [],
              "openblas_coretype": (None if args.blas_core == "native"
                                    else os.environ.get("OPENBLAS_CORETYPE"))}
    cfg = {"epochs": args.epochs, "batch_size": args.batch_size, "fanouts": args.fanouts,
           "timeout": args.timeout, "blas_core": args.blas_core}
    for key in [g for g in args.graphs.split(",") if g]:
        data = harness.ensure_graph(key)
        exe = harness.compile_gnnc("sage", data)
        for system in systems:
            harness.log(f"{key}: {system}")
            cell = run_one(system, exe, data, cfg, f"{key}-{system}")
            cell.update(graph=key, system=system, info=harness.graph_info(data))
            result["timing"].append(cell)
            harness.log(f"  {cell.get('epoch_ms', cell.get('status'))} ms/epoch")
    if args.accuracy:
        data = harness.ensure_graph(args.accuracy)
        exe = harness.compile_gnnc("sage", data)
        acfg = dict(cfg, epochs=args.accuracy_epochs, batch_size=256)
        for system in systems:
            accs, error = [], None
            for seed in range(args.seeds):
                cell = run_one(system, exe, data, acfg, f"acc-{system}-{seed}", seed)
                if "test_acc" not in cell:
                    error = cell.get("error", cell.get("status"))
                    break
                accs.append(cell["test_acc"])
            result["accuracy"].append({"system": system, "graph": args.accuracy,
                                       "test_acc": accs, "error": error})
            harness.log(f"accuracy {system}: {accs or error}")
    write(result, args.output)
    return 0


def write(result, name):
    out = os.path.join(ROOT, "docs", "benchmarks")
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    m = result["machine"]
    lines = [f"# Mini-batch training against the peers (issue 21)", "",
             f"`bench/minibatch.py {result['command']}` on {result['when']}, {m['cpu']}, "
             f"{m['cores']} cores, 2 threads (load average {m['loadavg_start']} at the start). "
             f"Peers: {result['peers']}. OPENBLAS_CORETYPE: "
             f"{result.get('openblas_coretype') or 'unset (OpenBLAS picks the CPU kernels)'}.", "",
             "GraphSAGE-mean (F → 256 → C, dropout 0.5, Adam), one epoch = every batch of the "
             "train split. Epoch: median after the first; edges/s: sampled edges the model ran "
             "on per second; RSS: the process's peak.", "",
             "| graph | system | batches | ms / epoch | sampled edges / epoch | M edges / s | "
             "peak RSS MiB | vs gnnc | status |", "|---|---|---|---|---|---|---|---|---|"]
    base = {c["graph"]: c for c in result["timing"] if c["system"] == "gnnc" and "epoch_ms" in c}
    for c in result["timing"]:
        if "epoch_ms" not in c:
            lines.append(f"| {c['graph']} | {c['system']} | | | | | | | "
                         f"{c.get('status')}: {str(c.get('error', ''))[:160]} |")
            continue
        g = base.get(c["graph"])
        ratio = f"{c['epoch_ms'] / g['epoch_ms']:.2f}×" if g else ""
        lines.append(f"| {c['graph']} | {c['system']} | {c['batches']:.0f} | {c['epoch_ms']:.0f} | "
                     f"{c['sampled_edges']:,.0f} | {c['edges_per_s'] / 1e6:.2f} | "
                     f"{c['maxrss_mib']:.0f} | {ratio} | ok |")
    if result["accuracy"]:
        lines += ["", "Accuracy (test, whole-graph evaluation, batch 256):", "",
                  "| graph | system | seeds | mean | std | within max(1 pt, 2σ) of gnnc |",
                  "|---|---|---|---|---|---|"]
        ours = next((a for a in result["accuracy"] if a["system"] == "gnnc"), None)
        for a in result["accuracy"]:
            if not a["test_acc"]:
                lines.append(f"| {a['graph']} | {a['system']} | | | | {a['error']} |")
                continue
            mean = statistics.mean(a["test_acc"])
            std = statistics.stdev(a["test_acc"]) if len(a["test_acc"]) > 1 else 0.0
            verdict = ""
            if ours and ours["test_acc"] and a is not ours:
                om = statistics.mean(ours["test_acc"])
                osd = statistics.stdev(ours["test_acc"]) if len(ours["test_acc"]) > 1 else 0.0
                tol = max(0.01, 2 * max(std, osd))
                verdict = (f"{'yes' if abs(om - mean) <= tol else 'no'} (difference "
                           f"{abs(om - mean):.4f}, tolerance {tol:.4f})")
            lines.append(f"| {a['graph']} | {a['system']} | {len(a['test_acc'])} | {mean:.4f} | "
                         f"{std:.4f} | {verdict} |")
    with open(os.path.join(out, name + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
