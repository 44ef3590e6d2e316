"""Trains a model under buffer budgets and checks it against the unbudgeted
program (issue 18): the same loss at every epoch (DESIGN.md's rule), the
device's high-water mark within the budget plus the state that stays
resident, the bytes the runtime moved equal to what the compiler planned
(the training step's and the evaluation's placement remarks, every epoch),
and, at each budget, fetched bytes DP <= LRU <= streaming.

    placement_run.py [--row-chunks K] [--features-out-of-core]
                     [--graph-out-of-core] [--no-midpoint] GNN_COMPILE
                     MODEL.mlir DATASET WORKDIR [FRACTION...]

Every compilation runs the steps over the vertices in K row chunks
(--row-chunks, default 1: whole buffers; the placement's tensors are then
the row buffers' chunks); the unbudgeted reference is compiled without.
With --features-out-of-core the features are placed too, read by chunks
from features.npy: the device peak must then stay within the budget plus
the resident state less the features, and the bytes read (spill file and
features.npy) cover the plan's fetches. With --graph-out-of-core the
graph's per-edge arrays are read by windows of the row chunks (needs K >
1): the windows must have read something, and the device peak may exceed
the budget plus the resident state by the windows (the JSON's estimate of
the graph).

Budgets: the least any plan needs (read from gnn-compile's error at a budget
of 1 byte), each FRACTION of the working set (the unbudgeted slot buffers,
the JSON's estimate.activations) that is not below it, and halfway between
the least and the working set (not with --no-midpoint: a test that runs the
fractions it needs and no more). Runs use GNNRT_POISON_FREED=1, so a memref
used after its buffer left the fast tier computes NaN, and a spill
directory under WORKDIR. Prints one line per budget and strategy.
"""

import json
import os
import re
import subprocess
import sys

EPOCHS = 6


def epoch_bytes(remarks):
    """The bytes fetched, evicted and read by graph windows per epoch (the
    training step and the evaluation) by the functions' placement remarks.
    """
    total = [0, 0, 0]
    for line in remarks.splitlines():
        if "remark: buffer placement: " not in line or \
                "buffer placement: a tile input" in line:
            continue
        for i, pattern in enumerate((r"; (\d+) fetches \((\d+) bytes\)",
                                     r", (\d+) evictions \((\d+) bytes\)",
                                     r"; (\d+) graph windows \((\d+) bytes\)")):
            m = re.search(pattern, line)
            if m:
                total[i] += int(m.group(2))
    return tuple(total)


def compile_model(compiler, model, dataset, out, *flags):
    return subprocess.run(
        [compiler, model, "--dataset", dataset, "-o", out, *flags],
        capture_output=True,
        text=True,
    )


def train(exe, dataset, workdir, name):
    summary = os.path.join(workdir, name + ".json")
    spill = os.path.join(workdir, "spill")
    os.makedirs(spill, exist_ok=True)
    env = dict(os.environ, GNNRT_POISON_FREED="1")
    subprocess.run(
        [exe, "--data", dataset, "--epochs", str(EPOCHS), "--quiet",
         "--spill-dir", spill, "--json", summary],
        check=True, env=env, stdout=subprocess.DEVNULL,
    )
    if os.listdir(spill):
        sys.exit(f"{name}: the spill directory is not empty after the run")
    with open(summary) as f:
        return json.load(f)


def same_losses(a, b):
    for x, y in zip(a["history"], b["history"], strict=True):
        if abs(x["loss"] - y["loss"]) > 1e-5 + 1e-4 * abs(y["loss"]):
            return f"epoch {x['epoch']}: loss {x['loss']} against {y['loss']}"
    return None


def main():
    args = sys.argv[1:]
    chunk_flags = ["--row-chunks", "1"]  # whole buffers unless told
    if args[0] == "--row-chunks":
        chunk_flags = ["--row-chunks", args[1]]
        args = args[2:]
    out_of_core = graph_out_of_core = False
    midpoint = True
    strategies = ["optimal", "lru", "streaming"]
    while args[0] in ("--features-out-of-core", "--graph-out-of-core",
                      "--no-midpoint", "--belady"):
        if args[0] == "--no-midpoint":
            midpoint = False
            args = args[1:]
            continue
        if args[0] == "--belady":  # Belady's MIN too
            strategies.insert(2, "belady")
            args = args[1:]
            continue
        chunk_flags.append(args[0])
        out_of_core |= args[0] == "--features-out-of-core"
        graph_out_of_core |= args[0] == "--graph-out-of-core"
        args = args[1:]
    compiler, model, dataset, workdir = args[:4]
    fractions = [float(f) for f in args[4:]]
    name = os.path.splitext(os.path.basename(model))[0]
    base_exe = os.path.join(workdir, name + "-unbudgeted")
    r = compile_model(compiler, model, dataset, base_exe)
    if r.returncode:
        sys.exit(r.stderr)
    base = train(base_exe, dataset, workdir, name + "-unbudgeted")
    working = base["memory"]["estimate"]["activations"]
    resident = base["memory"]["device_peak_bytes"] - working
    if out_of_core:  # the features are the plan's
        resident -= base["memory"]["estimate"]["features"]

    r = compile_model(compiler, model, dataset, os.devnull,
                      "--buffer-budget", "1", *chunk_flags)
    m = re.search(r"below the minimum any plan needs, (\d+) bytes", r.stderr)
    if r.returncode == 0 or not m:
        sys.exit(f"{name}: a budget of 1 byte was not refused:\n{r.stderr}")
    least = int(m.group(1))
    budgets = {least, (least + working) // 2} if midpoint else {least}
    budgets |= {int(f * working) for f in fractions if f * working >= least}
    skipped = [f for f in fractions if f * working < least]
    if skipped:
        print(f"{name}: fractions {skipped} of the working set are below the "
              f"least plan ({least / working:.2f})")

    runs = 0
    for budget in sorted(budgets):
        fetched = {}
        for strategy in strategies:
            exe = os.path.join(workdir, f"{name}-{budget}-{strategy}")
            r = compile_model(compiler, model, dataset, exe, "--buffer-budget",
                              str(budget), "--placement", strategy,
                              "--remarks", *chunk_flags)
            if r.returncode:
                sys.exit(r.stderr)
            plan = re.search(
                r"buffer placement: (\S+).*?peak (\d+); (\d+) fetches "
                r"\((\d+) bytes\), (\d+) evictions \((\d+) bytes\)",
                r.stderr)
            if not plan:
                sys.exit(f"{name} at {budget}: no placement remark:\n"
                         f"{r.stderr}")
            peak, fetch_bytes, evict_bytes = (
                int(plan.group(i)) for i in (2, 4, 6))
            epoch = epoch_bytes(r.stderr)
            fetched[strategy] = fetch_bytes
            got = train(exe, dataset, workdir, f"{name}-{budget}-{strategy}")
            problem = same_losses(got, base)
            mem = got["memory"]
            if problem:
                sys.exit(f"{name} at {budget} ({strategy}): {problem}")
            if peak > budget:
                sys.exit(f"{name} at {budget} ({strategy}): planned peak "
                         f"{peak} above the budget")
            windows = mem["estimate"]["graph"] if graph_out_of_core else 0
            if graph_out_of_core and mem["graph_read_bytes"] == 0:
                sys.exit(f"{name} at {budget} ({strategy}): the graph was "
                         f"never read from storage")
            if not graph_out_of_core and mem["graph_read_bytes"] != 0:
                sys.exit(f"{name} at {budget} ({strategy}): graph read "
                         f"from storage with the graph in memory")
            if mem["device_peak_bytes"] > budget + resident + windows:
                sys.exit(f"{name} at {budget} ({strategy}): device peak "
                         f"{mem['device_peak_bytes']} above the budget + "
                         f"{resident} resident")
            # The copies of the training step and the evaluation, every
            # epoch, exactly as planned (a tile's input chunk read
            # selectively skips rows: counted as read).
            read = mem["spill_read_bytes"] + mem["features_read_bytes"] + \
                mem["selective"]["skipped_bytes"]
            if out_of_core and mem["features_read_bytes"] == 0:
                sys.exit(f"{name} at {budget} ({strategy}): the features "
                         f"were never read from storage")
            if not out_of_core and mem["features_read_bytes"] != 0:
                sys.exit(f"{name} at {budget} ({strategy}): features read "
                         f"from storage with the features in memory")
            moved = (read, mem["spill_written_bytes"], mem["graph_read_bytes"])
            if moved != tuple(EPOCHS * n for n in epoch):
                sys.exit(f"{name} at {budget} ({strategy}): read / written "
                         f"/ graph windows read {moved} bytes in {EPOCHS} "
                         f"epochs; the plans' remarks say "
                         f"{epoch} per epoch (training step and "
                         f"evaluation)")
            if fetch_bytes == 0 and budget == least:
                sys.exit(f"{name} at {budget} ({strategy}): nothing moved "
                         f"at the least budget")
            runs += 1
            print(f"{name}: budget {budget} ({budget / working:.2f} of the "
                  f"working set) {strategy}: losses agree, device peak "
                  f"{mem['device_peak_bytes']} <= budget + resident state, "
                  f"{fetch_bytes} bytes fetched per step")
        if not fetched["optimal"] <= fetched["lru"] <= fetched["streaming"]:
            sys.exit(f"{name} at {budget}: fetched bytes DP "
                     f"{fetched['optimal']}, LRU {fetched['lru']}, streaming "
                     f"{fetched['streaming']}: not DP <= LRU <= streaming")
        if "belady" in fetched and not (fetched["optimal"] <= fetched["belady"]
                                        <= fetched["streaming"]):
            sys.exit(f"{name} at {budget}: fetched bytes DP "
                     f"{fetched['optimal']}, Belady {fetched['belady']}, "
                     f"streaming {fetched['streaming']}: not DP <= Belady <= "
                     "streaming")
    print(f"{name}: {runs} placed runs agree with the unbudgeted one, "
          f"DP <= LRU <= streaming"
          + (" and DP <= Belady <= streaming" if "belady" in strategies else "")
          + " at every budget")


if __name__ == "__main__":
    main()
