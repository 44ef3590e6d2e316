#!/usr/bin/env python3
"""NeuGraph's column-row order of the tiled aggregations against row-column
(DIGEST-neugraph-roc.md, behaviour 14: "column-row order beats row-column,
paper: 1.4-1.7x"), side by side in one run.

    bench/tile_order.py [--graph arxiv] [--models gin,sage,gcn,gat]
                        [--mem-budget 250M] [--row-chunks 8]
                        [--placements optimal,lru] [--selective auto,never]
                        [--epochs 3] [--rounds 2] [--uncached-reads]
                        [--output tile-order]

Each model is compiled twice with the same budget, row chunks and placement
(`gnn-compile --mem-budget B --row-chunks K --features-out-of-core
--graph-out-of-core=false --tile-order column-row|row-column`): column-row runs each destination
chunk over the source chunks (its partial sums stay, the sources stream),
row-column each source chunk over the destination chunks (the source
stays, the partial sums stream: written and read back between tiles). The
two executables then run alternately, `--rounds` times each, under
`--mem-budget B` with each `--selective-loads` mode (NeuGraph's filter
applies to a chunk streamed for one tile: column-row's sources; under
row-column the kept source chunk is read whole). Reported: the median
epoch time, the bytes the slow tier moved per epoch (spill reads and
writes, feature reads), both as row-column / column-row, and whether the
losses are the same floats (they must be: each row adds its tiles in the
same order either way).

Writes docs/benchmarks/OUTPUT.{json,md}. The graphs are bench/run.py's
(same cache); the spill files go to --spill-root.
"""

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(ROOT, "python"))

import run as harness  # noqa: E402  (bench/run.py: graphs, programs, cells)
from budget import parse_bytes  # noqa: E402

ORDERS = ("column-row", "row-column")


def program(model: str):
    if model == "gin":
        from gnnc import zoo
        return zoo.gin(hidden=256, dropout=0.5)
    return harness.gnnc_program(model)


def compile_order(model, data, out, budget, chunks, placement, order):
    from gnnc import toolchain
    from gnnc.printer import to_mlir
    src = out + ".mlir"
    with open(src, "w") as f:
        f.write(to_mlir(program(model)))
    cmd = [toolchain.find_tool("gnn-compile"), src, "--dataset", data, "-o", out,
           "--remarks", "--mem-budget", str(budget), "--row-chunks", str(chunks),
           "--graph-out-of-core=false", "--features-out-of-core", "--placement", placement,
           "--tile-order", order]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        err = [line for line in p.stderr.splitlines() if "error:" in line]
        return {"error": (err[0] if err else p.stderr.strip()[-400:]).split("error: ", 1)[-1]}
    info = {}
    rc = re.search(r"tiles in row-column order: (\d+) aggregation", p.stderr)
    info["row_column_steps"] = int(rc.group(1)) if rc else 0
    # The training step's plan: its strategy and what it expects to move.
    plan = re.search(r"placement: ([a-z-]+).*?; (\d+) fetches \((\d+) bytes\), "
                     r"(\d+) evictions \((\d+) bytes\)", p.stderr)
    if plan:
        info.update(strategy=plan.group(1), planned_fetch_bytes=int(plan.group(3)),
                    planned_evict_bytes=int(plan.group(5)))
    return info


def run_once(exe, data, budget, epochs, spill, selective, threads, uncached, log_path):
    summary = log_path + ".json"
    cmd = [exe, "--data", data, "--epochs", str(epochs), "--mem-budget", str(budget),
           "--quiet", "--spill-dir", spill, "--json", summary,
           "--selective-loads", selective]
    if uncached:
        cmd.append("--uncached-reads")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = harness.run_process(cmd, env, log_path, 3600, 0)
    if r["status"] != "ok":
        return r
    with open(summary) as f:
        s = json.load(f)
    m = s["memory"]
    times = sorted(h["ms"] for h in s["history"][1:]) or [s["median_epoch_ms"]]
    r.update(epoch_ms=times[len(times) // 2],
             read=(m["spill_read_bytes"] + m.get("features_read_bytes", 0)) / epochs,
             written=m["spill_written_bytes"] / epochs,
             filtered=m["selective"]["filtered"],
             losses=[h["loss"] for h in s["history"]])
    return r


def write_report(out: str) -> None:
    with open(out + ".json") as f:
        res = json.load(f)
    g = res["graph"]
    lines = [
        "# Tile order: NeuGraph's column-row against row-column (issue 18, behaviour 14)", "",
        f"`bench/tile_order.py {res['command']}` on {res['started']}, {res['machine']}, "
        f"{res['threads']} threads (load average {' '.join(res['load'])} at the start). "
        f"Graph: {g['name']} ({g['vertices']:,} vertices, "
        f"{g['edges']:,} edges, {g['features']} features); "
        f"`--mem-budget {res['budget']}`, {res['row_chunks']} row chunks, the features out of core, the graph in memory, "
        f"{res['epochs']} epochs per run ({'uncached reads: the slow tier is the disk' if res['uncached_reads'] else 'through the page cache'}), "
        f"{res['rounds']} runs of each order, alternating.", "",
        "Epoch: the median over the runs of each run's median epoch after the first. "
        "Bytes per epoch: spill reads + feature reads, and spill writes. "
        "Ratios are row-column / column-row (above 1: column-row is better).", "",
        "| model | placement | selective | aggregation steps in row-column | column-row ms "
        "| row-column ms | time ratio | column-row read / written MiB "
        "| row-column read / written MiB | bytes ratio | tiles filtered (c-r) | same losses |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    mib = 1 << 20
    for c in res["cells"]:
        if "error" in c:
            lines.append(f"| {c['model']} | {c['placement']} | | | {c['error']} | | | | | | | |")
            continue
        a, b = c["column-row"], c["row-column"]
        if "epoch_ms" not in a or "epoch_ms" not in b:
            lines.append(f"| {c['model']} | {c['placement']} | {c['selective']} | | "
                         f"{a.get('status', '?')} | {b.get('status', '?')} | | | | | | |")
            continue
        ba, bb = a["read"] + a["written"], b["read"] + b["written"]
        lines.append(
            f"| {c['model']} | {c['placement']} | {c['selective']} | "
            f"{c['plans']['row-column'].get('row_column_steps', '?')} | {a['epoch_ms']:.0f} | "
            f"{b['epoch_ms']:.0f} | {b['epoch_ms'] / a['epoch_ms']:.2f}x | "
            f"{a['read'] / mib:.0f} / {a['written'] / mib:.0f} | "
            f"{b['read'] / mib:.0f} / {b['written'] / mib:.0f} | {bb / ba:.2f}x | "
            f"{a['filtered']} | {'yes' if c['same_losses'] else 'NO'} |")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", default="arxiv", choices=sorted(harness.GRAPHS))
    ap.add_argument("--models", default="gin,sage,gcn,gat")
    ap.add_argument("--mem-budget", default="250M")
    ap.add_argument("--row-chunks", type=int, default=8)
    ap.add_argument("--placements", default="optimal,lru")
    ap.add_argument("--selective", default="auto,never")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--uncached-reads", action="store_true",
                    help="the runs read from and write to the disk, not the page cache")
    ap.add_argument("--output", default="tile-order")
    ap.add_argument("--spill-root", default=os.path.join(harness.CACHE, "spill"))
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite docs/benchmarks/OUTPUT.md from its .json")
    a = ap.parse_args()
    out = os.path.join(ROOT, "docs", "benchmarks", a.output)
    if a.report_only:
        write_report(out)
        return
    if a.epochs < 2:
        ap.error("--epochs must be 2 or more (the first is left out)")
    if a.row_chunks < 2:
        ap.error("--row-chunks must be 2 or more (row-column order needs row chunks)")
    budget = parse_bytes(a.mem_budget)
    data = harness.ensure_graph(a.graph)
    work = os.path.join(harness.CACHE, "tile-order")
    os.makedirs(work, exist_ok=True)
    os.makedirs(a.spill_root, exist_ok=True)
    res = {"graph": harness.graph_info(data), "command": " ".join(sys.argv[1:]),
           "started": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
           "load": open("/proc/loadavg").read().split()[:3],
           "machine": f"{harness.machine_info()['cpu']}, {os.cpu_count()} cores",
           "threads": a.threads, "budget": a.mem_budget, "row_chunks": a.row_chunks,
           "epochs": a.epochs, "rounds": a.rounds, "uncached_reads": a.uncached_reads,
           "cells": []}

    def save():
        with open(out + ".json", "w") as f:
            json.dump(res, f, indent=1)
        write_report(out)

    for model in a.models.split(","):
        for placement in a.placements.split(","):
            exes, plans = {}, {}
            for order in ORDERS:
                exe = os.path.join(work, f"{model}-{a.graph}-{placement}-{order}")
                plans[order] = compile_order(model, data, exe, budget, a.row_chunks,
                                             placement, order)
                exes[order] = exe
            bad = [p["error"] for p in plans.values() if "error" in p]
            if bad:
                harness.log(f"{model} {placement}: {bad[0]}")
                res["cells"].append({"model": model, "placement": placement, "error": bad[0]})
                save()
                continue
            for selective in a.selective.split(","):
                runs = {o: [] for o in ORDERS}
                for rnd in range(a.rounds):
                    for order in ORDERS:
                        harness.log(f"{model} {placement} {selective} {order} round {rnd + 1}")
                        runs[order].append(run_once(
                            exes[order], data, budget, a.epochs, a.spill_root, selective,
                            a.threads, a.uncached_reads,
                            os.path.join(work, f"{model}-{placement}-{selective}-{order}-{rnd}.log")))
                cell = {"model": model, "placement": placement, "selective": selective,
                        "plans": plans}
                for order in ORDERS:
                    ok = [r for r in runs[order] if r.get("status") == "ok"]
                    if not ok:
                        cell[order] = {"status": runs[order][0].get("status", "failed")}
                        continue
                    cell[order] = {"epoch_ms": statistics.median(r["epoch_ms"] for r in ok),
                                   "epochs_ms": [r["epoch_ms"] for r in ok],
                                   "read": ok[0]["read"], "written": ok[0]["written"],
                                   "filtered": ok[0]["filtered"], "losses": ok[0]["losses"]}
                losses = [cell[o].get("losses") for o in ORDERS]
                cell["same_losses"] = losses[0] is not None and losses[0] == losses[1]
                res["cells"].append(cell)
                save()
    print(open(out + ".md").read())


if __name__ == "__main__":
    main()
