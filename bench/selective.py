#!/usr/bin/env python3
"""Selective loading and the sub-chunk pipeline (issue 18, NeuGraph §3.2),
side by side in one run:

    bench/selective.py [--vertices 65536] [--draws 60000] [--features 256]
                       [--row-chunks 32,4] [--epochs 5] [--uncached-reads]
                       [--modes never,always,auto] [--sub-chunks 1,4]
                       [--output selective]

GIN (the zoo's, which sums the raw feature rows) on a sparse RMAT graph with
its features out of core, compiled with `--buffer-budget` at 1.05x the least
plan and the streaming placement (every tile's input chunk is fetched for
that tile), for each row chunk count. Each executable runs with
`--selective-loads never|always|auto` and `--sub-chunks 1|4`, and the table
gives the median epoch time after the first two (the pipeline profiles a
tile's first two visits and measures a baseline in the third), the bytes
read per epoch (spill file + features.npy), the bytes the filter skipped,
the tiles filtered, and the pipeline's read, compute and wall seconds over
its pipelined tiles. Every run's losses are checked against the unbudgeted
program (DESIGN.md's rule). Writes docs/benchmarks/OUTPUT.{json,md}.

The spill file and features.npy sit in the page cache on this machine: a
"read" is a copy by a core, which the compute's threads also use. With
--uncached-reads the budgeted runs drop every range they read from the page
cache and write the spill file through (the executable's --uncached-reads):
the reads wait on the disk, as they would for files larger than memory.
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
sys.path.insert(0, os.path.join(ROOT, "python"))
BIN = os.path.join(ROOT, "build", "bin")


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit(f"{' '.join(cmd)}:\n{r.stderr[-2000:]}")
    return r


def dataset(args):
    name = f"rmat-sparse-{args.vertices}-{args.draws}-{args.features}"
    path = os.path.join(BENCH, ".cache", name)
    if not os.path.exists(os.path.join(path, "meta.json")):
        sh([sys.executable, "-m", "gnnc.data", "generate", "rmat", "--vertices",
            str(args.vertices), "--draws", str(args.draws), "--features",
            str(args.features), "--classes", "8", "--seed", "5", "-o", path],
           env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    return path


def train(exe, data, spill, out, epochs, *flags):
    sh([exe, "--data", data, "--epochs", str(epochs), "--quiet", "--eval-every",
        str(epochs), "--spill-dir", spill, "--json", out, *flags])
    with open(out) as f:
        return json.load(f)


def losses_agree(a, b):
    return all(abs(x["loss"] - y["loss"]) <= 1e-5 + 1e-4 * abs(y["loss"])
               for x, y in zip(a["history"], b["history"], strict=True))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vertices", type=int, default=65536)
    ap.add_argument("--draws", type=int, default=60000)
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--row-chunks", default="32,4")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--uncached-reads", action="store_true",
                    help="the budgeted runs read from the disk, not the page cache")
    ap.add_argument("--modes", default="never,always,auto")
    ap.add_argument("--sub-chunks", default="1,4")
    ap.add_argument("--output", default="selective")
    args = ap.parse_args()
    data = dataset(args)
    work = os.path.join(BENCH, ".cache", "selective")
    spill = os.path.join(work, "spill")
    os.makedirs(spill, exist_ok=True)
    model = os.path.join(ROOT, "examples", "models", "gin.mlir")
    compiler = os.path.join(BIN, "gnn-compile")
    ref_exe = os.path.join(work, "gin-ref")
    sh([compiler, model, "--dataset", data, "-o", ref_exe])
    ref = train(ref_exe, data, spill, ref_exe + ".json", args.epochs)
    cells = []
    for k in (int(x) for x in args.row_chunks.split(",")):
        flags = ["--placement", "streaming", "--row-chunks", str(k),
                 "--features-out-of-core"]
        r = subprocess.run([compiler, model, "--dataset", data, "-o", os.devnull,
                            "--buffer-budget", "1", *flags],
                           capture_output=True, text=True)
        least = int(re.search(r"needs, (\d+) bytes", r.stderr).group(1))
        budget = int(least * 1.05)
        exe = os.path.join(work, f"gin-k{k}")
        remark = sh([compiler, model, "--dataset", data, "-o", exe,
                     "--buffer-budget", str(budget), "--remarks", *flags]).stderr
        tiles = re.search(r"(\d+) fetches for one tile", remark).group(1)
        for mode, sub in ((m, int(c)) for m in args.modes.split(",")
                          for c in args.sub_chunks.split(",")):
            out = os.path.join(work, f"k{k}-{mode}-{sub}.json")
            got = train(exe, data, spill, out, args.epochs,
                        "--selective-loads", mode, "--sub-chunks", str(sub),
                        *(["--uncached-reads"] if args.uncached_reads else []))
            mem = got["memory"]
            ms = [h["ms"] for h in got["history"]][2:] or \
                [h["ms"] for h in got["history"]]
            cells.append(dict(
                row_chunks=k, budget=budget, tile_fetches=int(tiles),
                mode=mode, sub_chunks=sub,
                median_ms=statistics.median(ms),
                read_per_epoch=(mem["spill_read_bytes"] +
                                mem["features_read_bytes"]) / args.epochs,
                skipped_per_epoch=mem["selective"]["skipped_bytes"] /
                args.epochs,
                selective=mem["selective"], pipeline=mem["pipeline"],
                uncached_reads=mem.get("uncached_reads", False),
                losses_agree=losses_agree(got, ref)))
            print(f"K={k} {mode:6s} sub-chunks {sub}: "
                  f"{cells[-1]['median_ms']:.0f} ms, read "
                  f"{cells[-1]['read_per_epoch'] / 2**30:.2f} GiB/epoch, "
                  f"filtered {mem['selective']['filtered']}, "
                  f"losses {'agree' if cells[-1]['losses_agree'] else 'DIFFER'}",
                  flush=True)
    os.makedirs(os.path.join(ROOT, "docs", "benchmarks"), exist_ok=True)
    base = os.path.join(ROOT, "docs", "benchmarks", args.output)
    with open(base + ".json", "w") as f:
        json.dump(dict(date=datetime.date.today().isoformat(),
                       dataset=os.path.basename(data), epochs=args.epochs,
                       uncached_reads=args.uncached_reads,
                       reference_median_ms=statistics.median(
                           h["ms"] for h in ref["history"]),
                       cells=cells), f, indent=1)
    lines = [
        f"# Selective loading and the sub-chunk pipeline "
        f"({datetime.date.today().isoformat()})", "",
        f"`bench/selective.py`: GIN on `{os.path.basename(data)}` (features "
        f"out of core, streaming placement at 1.05x the least plan), "
        f"{args.epochs} epochs; median epoch after the first two. In memory: "
        f"{statistics.median(h['ms'] for h in ref['history']):.0f} ms. "
        + ("Reads uncached (--uncached-reads: the pages a read covers leave the "
           "page cache by the next epoch, spill writes go through to the disk)."
           if args.uncached_reads else
           "The spill file and features.npy in the page cache.") +
        f" Command: `bench/selective.py {' '.join(sys.argv[1:])}`.", "",
        "| K | budget | mode | sub-chunks | epoch ms | read GiB/epoch | "
        "skipped GiB/epoch | filtered / decided | pipelined tiles (off) | "
        "pipeline read / compute / wall s | losses |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        s, p = c["selective"], c["pipeline"]
        lines.append(
            f"| {c['row_chunks']} | {c['budget'] / 2**20:.0f} MiB | {c['mode']} "
            f"| {c['sub_chunks']} | {c['median_ms']:.0f} | "
            f"{c['read_per_epoch'] / 2**30:.2f} | "
            f"{c['skipped_per_epoch'] / 2**30:.2f} | "
            f"{s['filtered']} / {s['filtered'] + s['whole']} | "
            f"{p['tiles']} ({p['off_tiles']}) | {p['read_s']:.2f} / "
            f"{p['compute_s']:.2f} / {p['wall_s']:.2f} | "
            f"{'agree' if c['losses_agree'] else 'DIFFER'} |")
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {base}.md")


if __name__ == "__main__":
    main()
