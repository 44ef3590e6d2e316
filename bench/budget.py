#!/usr/bin/env python3
"""Training under a memory budget (issue 18): each model on a graph, in
memory and compiled for each budget with each placement strategy, side by
side in one run.

    bench/budget.py [--graph reddit] [--models gcn,gat] [--budgets 4G,3G,2G,1G]
                    [--strategies optimal,lru,streaming] [--epochs 3]
                    [--row-chunks K] [--uncached-reads] [--output budget-reddit]

For every (model, budget, strategy) cell: `gnn-compile --mem-budget B
--placement S --dataset D --remarks` (the chunk tiling's P and the placement
remark are recorded; a budget below the least plan is reported with the
compiler's message), then the executable with `--mem-budget B --spill-dir`
for `--epochs` epochs (evaluation only at the end): peak RSS (wait4), the
device's high-water mark, the bytes the slow tier moved per training step,
and the median epoch time against the in-memory run of the same model.
Writes docs/benchmarks/OUTPUT.{json,md} and OUTPUT.png (plotted with the
peers' Python when it has matplotlib).

The graphs and executables are bench/run.py's (same cache). The spill file
is in --spill-root (default bench/.cache/spill): on this machine it lands in
the page cache, so "bytes moved" are real reads and writes but their time is
mostly memory copies. With --uncached-reads every run passes the
executable's --uncached-reads: what it reads leaves the page cache and the
spill writes go through, so the reads and writes wait on the disk as for
files larger than memory.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(ROOT, "python"))

import run as harness  # noqa: E402  (bench/run.py: graphs, programs, cells)

GIB = 1 << 30


def parse_bytes(text: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)", text.strip())
    if not m:
        raise SystemExit(f"bad byte count '{text}'")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2)]
    return int(float(m.group(1)) * scale)


def compile_cell(model, data, out, budget, strategy, row_chunks=0):
    from gnnc import toolchain
    from gnnc.printer import to_mlir
    src = out + ".mlir"
    with open(src, "w") as f:
        f.write(to_mlir(harness.gnnc_program(model)))
    cmd = [toolchain.find_tool("gnn-compile"), src, "--dataset", data, "-o", out,
           "--remarks"]
    if budget:
        cmd += ["--mem-budget", str(budget), "--placement", strategy]
        if row_chunks > 0:
            cmd += ["--row-chunks", str(row_chunks)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    info = {"compile_rc": p.returncode}
    if p.returncode:
        err = [line for line in p.stderr.splitlines() if "error:" in line]
        info["error"] = (err[0] if err else p.stderr.strip()[-400:]).split("error: ", 1)[-1]
        return info
    chunks = sorted({int(x) for x in re.findall(r"chunk tiling: P = (\d+)", p.stderr)})
    info["chunks"] = chunks
    k = re.search(r"row chunks: \d+ of \d+ steps over the vertices run in (\d+) chunks",
                  p.stderr)
    info["row_chunks"] = int(k.group(1)) if k else 1
    info["features_out_of_core"] = "the features out of core" in p.stderr
    info["graph_out_of_core"] = "the graph out of core" in p.stderr
    plans = re.findall(r"buffer placement: (.*)", p.stderr)
    info["placement"] = plans
    m = re.search(r"buffer placement: (\S+).*?; (\d+) bytes for the buffers \(minimum (\d+)\), "
                  r"peak (\d+); (\d+) fetches \((\d+) bytes\), (\d+) evictions \((\d+) bytes\)",
                  p.stderr)
    if m:
        info.update(strategy_run=m.group(1), buffer_budget=int(m.group(2)),
                    least=int(m.group(3)), plan_peak=int(m.group(4)),
                    plan_fetch_bytes=int(m.group(6)), plan_evict_bytes=int(m.group(8)))
    return info


def run_exe(exe, data, budget, epochs, spill, log_path, threads, uncached=False):
    os.makedirs(spill, exist_ok=True)
    summary = log_path + ".json"
    cmd = [exe, "--data", data, "--epochs", str(epochs), "--eval-every", "1000000",
           "--quiet", "--spill-dir", spill, "--json", summary]
    if budget:
        cmd += ["--mem-budget", str(budget)]
    if uncached:
        cmd.append("--uncached-reads")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = harness.run_process(cmd, env, log_path, 7200, 0)
    if r["status"] == "ok":
        with open(summary) as f:
            s = json.load(f)
        times = sorted(h["ms"] for h in s["history"][1:]) or [s["median_epoch_ms"]]
        m = s["memory"]
        r.update(epoch_ms=times[len(times) // 2], final_loss=s["final"]["loss"],
                 device_peak=m["device_peak_bytes"], peak_resident=m["peak_resident_bytes"],
                 read_per_epoch=(m["spill_read_bytes"]
                                 + m.get("features_read_bytes", 0)
                                 + m.get("graph_read_bytes", 0)) / epochs,
                 features_read_per_epoch=m.get("features_read_bytes", 0) / epochs,
                 graph_read_per_epoch=m.get("graph_read_bytes", 0) / epochs,
                 written_per_epoch=m["spill_written_bytes"] / epochs,
                 losses=[h["loss"] for h in s["history"]])
    return r


def fmt_gib(b):
    return f"{b / GIB:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", default="reddit", choices=sorted(harness.GRAPHS))
    ap.add_argument("--models", default="gcn,gat")
    ap.add_argument("--budgets", default="4G,3G,2G,1G")
    ap.add_argument("--strategies", default="optimal,lru,streaming")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--row-chunks", type=int, default=0,
                    help="the budgeted programs run their steps over the vertices "
                         "in this many row chunks (gnn-compile --row-chunks; "
                         "default: gnn-compile's choice, the fewest that fit)")
    ap.add_argument("--uncached-reads", action="store_true",
                    help="the runs read from and write to the disk, not the page cache")
    ap.add_argument("--output", default="budget-reddit")
    ap.add_argument("--spill-root", default=os.path.join(harness.CACHE, "spill"))
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite docs/benchmarks/OUTPUT.md and .png from its .json")
    a = ap.parse_args()
    if a.report_only:
        write_report(os.path.join(ROOT, "docs", "benchmarks", a.output))
        return
    if a.epochs < 2:
        ap.error("--epochs must be 2 or more (the first is left out)")
    data = harness.ensure_graph(a.graph)
    info = harness.graph_info(data)
    work = os.path.join(harness.CACHE, "budget")
    os.makedirs(work, exist_ok=True)
    started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    load = open("/proc/loadavg").read().split()[:3]
    cells = []
    out = os.path.join(ROOT, "docs", "benchmarks", a.output)

    def save():
        # After every cell: a run cut short keeps the cells it measured.
        with open(out + ".json", "w") as f:
            json.dump({"graph": info, "started": started, "load": load, "epochs": a.epochs,
                       "row_chunks": a.row_chunks, "uncached_reads": a.uncached_reads,
                       "threads": a.threads, "command": " ".join(sys.argv[1:]),
                       "cells": cells}, f, indent=1)

    for model in a.models.split(","):
        base_exe = os.path.join(work, f"{model}-{a.graph}-unbudgeted")
        c = compile_cell(model, data, base_exe, 0, "")
        harness.log(f"{model}: in memory")
        base = run_exe(base_exe, data, 0, a.epochs, a.spill_root,
                       base_exe + ".log", a.threads, a.uncached_reads)
        cells.append({"model": model, "budget": 0, "strategy": "in memory", **c, **base})
        save()
        for budget in [parse_bytes(b) for b in a.budgets.split(",")]:
            for strategy in a.strategies.split(","):
                exe = os.path.join(work, f"{model}-{a.graph}-{budget}-{strategy}")
                c = compile_cell(model, data, exe, budget, strategy, a.row_chunks)
                cell = {"model": model, "budget": budget, "strategy": strategy, **c}
                if c["compile_rc"] == 0:
                    harness.log(f"{model}: {fmt_gib(budget)} GiB, {strategy}")
                    r = run_exe(exe, data, budget, a.epochs, a.spill_root, exe + ".log",
                                a.threads, a.uncached_reads)
                    cell.update(r)
                    if r["status"] == "ok" and base["status"] == "ok":
                        cell["slowdown"] = r["epoch_ms"] / base["epoch_ms"]
                        cell["losses_agree"] = all(
                            abs(x - y) <= 1e-5 + 1e-4 * abs(y)
                            for x, y in zip(r["losses"], base["losses"]))
                else:
                    harness.log(f"{model}: {fmt_gib(budget)} GiB, {strategy}: "
                                f"{c['error'][:120]}")
                cells.append(cell)
                save()
    shutil.rmtree(a.spill_root, ignore_errors=True)
    write_report(out)


def refusal(error: str) -> str:
    """The compiler's refusal, short."""
    m = re.search(r"budget of (\d+) bytes is below what stays resident through the run, "
                  r"(\d+) bytes", error)
    if m:
        return f"refused: the resident state ({fmt_gib(int(m.group(2)))} GiB) exceeds the budget"
    m = re.search(r"leaves (\d+) bytes .*minimum any plan needs, (\d+) bytes .*?: '([^']+)'",
                  error)
    if m:
        return (f"refused: {fmt_gib(int(m.group(1)))} GiB left for the buffers, the least "
                f"plan needs {fmt_gib(int(m.group(2)))} ('{m.group(3)}')")
    return "refused: " + error


def write_report(out: str) -> None:
    """docs/benchmarks/OUT.md (and .png) from OUT.json."""
    with open(out + ".json") as f:
        result = json.load(f)
    info, cells = result["graph"], result["cells"]
    lines = [
        f"# Training under a memory budget: {info['name']}",
        "",
        f"`bench/budget.py {result['command']}` on {result['started']}, {result['threads']} "
        f"threads (load average {' '.join(result['load'])} at the start). "
        f"{info['vertices']:,} vertices, {info['edges']:,} edges, F = {info['features']}, "
        f"C = {info['classes']}."
        + (" Every run with `--uncached-reads`: what it reads leaves the page cache and "
           "its spill writes go through, so the slow tier's reads and writes wait on "
           "the disk." if result.get("uncached_reads") else ""),
        "",
        "Each cell: `gnn-compile --mem-budget B --placement S --dataset D`, then the "
        "executable with `--mem-budget B --spill-dir` for the epochs (the first left out of "
        "the median; evaluation only after the last). **Peak RSS**: the process's maximum "
        "resident set (wait4), dataset and runtime included. **Device peak**: the runtime's "
        "high-water mark of its allocations. **Read / written**: the slow tier's bytes per "
        "epoch (the spill file and, with the features out of core, features.npy: "
        "**of it features**; with the graph out of core, indices.npy and the spill file's "
        "CSR: **of it graph**; all in the page cache here). **Slow-down**: median epoch "
        "time / "
        "the in-memory run's. **P**: the chunk tiling's choices. **K**: the row chunks "
        "of the steps over the vertices (gnn-compile's choice unless --row-chunks). "
        "**Losses**: every epoch's "
        "loss against the in-memory run's (DESIGN.md's rule). A budget below what any plan "
        "needs shows the compiler's refusal.",
        "",
        "**Features**, **graph**: in memory, or out of core (the features read by row chunks "
        "from features.npy, the graph's per-edge arrays by windows of a row chunk's edges; "
        "gnn-compile's choice when no plan fits with them in memory).",
        "",
        "| model | budget GiB | placement | P | K | features | graph | peak RSS GiB "
        "| device peak GiB | read GiB/epoch | of it features | of it graph "
        "| written GiB/epoch | epoch s | slow-down | losses |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        budget = "—" if not c["budget"] else fmt_gib(c["budget"])
        if c.get("compile_rc"):
            lines.append(f"| {c['model']} | {budget} | {c['strategy']} | | | | | | | | | | "
                         f"| | | {refusal(c['error'])} |")
            continue
        if c.get("status") != "ok":
            lines.append(f"| {c['model']} | {budget} | {c['strategy']} | | | | | | | | | | "
                         f"| | | {c.get('status')}: {c.get('error', '')[:200]} |")
            continue
        p = ",".join(str(x) for x in c.get("chunks", [])) or "1"
        strategy = c.get("strategy_run", c["strategy"])
        if c["strategy"] == "optimal" and strategy == "lru":
            strategy = "optimal (DP over its limits: LRU)"
        elif strategy == "optimal-bounded":
            strategy = "optimal (DP over its limits: bounded search)"
        lines.append(
            f"| {c['model']} | {budget} | {strategy} | {p} | {c.get('row_chunks', 1)} | "
            f"{'out of core' if c.get('features_out_of_core') else 'in memory'} | "
            f"{'out of core' if c.get('graph_out_of_core') else 'in memory'} | "
            f"{c['maxrss_mib'] / 1024:.2f} | "
            f"{fmt_gib(c['device_peak'])} | {fmt_gib(c['read_per_epoch'])} | "
            f"{fmt_gib(c.get('features_read_per_epoch', 0))} | "
            f"{fmt_gib(c.get('graph_read_per_epoch', 0))} | "
            f"{fmt_gib(c['written_per_epoch'])} | {c['epoch_ms'] / 1000:.2f} | "
            f"{c.get('slowdown', 1.0):.2f}× | "
            f"{'agree' if c.get('losses_agree', True) else 'DIFFER'} |")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    harness.log(f"wrote {os.path.relpath(out, ROOT)}.md")
    # The peers' Python has matplotlib; else this one, where it does.
    peers_py = os.path.join(BENCH, ".venv-peers", "bin", "python")
    plot_py = peers_py if os.path.exists(peers_py) else sys.executable
    if subprocess.run([plot_py, "-c", "import matplotlib"],
                      capture_output=True).returncode == 0:
        subprocess.run([plot_py, os.path.join(BENCH, "plot_budget.py"), out + ".json",
                        out + ".png"])
    else:
        harness.log("no matplotlib: the plot is not drawn")


if __name__ == "__main__":
    main()
