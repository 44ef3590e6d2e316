"""Checks a multi-process run against the single-process one: the per-epoch
losses within DESIGN.md's rule (relative 1e-4, absolute 1e-5), the trained
parameters within its rel-norm rule (1e-4 per tensor), rank 0's part a true
part of the graph, and the bytes its collectives moved equal to shared
preloading's formula exactly:

    all-reduce calls = 1 + a + buckets + epochs + evaluations
    all-reduce bytes = 16 + b + epochs (4 P + 4) + 48 evaluations

(16: the start-up fingerprint, two int64; a and b: --partition auto's
votes, the summary's auto record (its vote on the closures' size and the
memory left, two int64; whether the partitioned parts fit, one int64);
per epoch the gradients, P floats in the summary's gradient_buckets (one
per epoch unless --bucket-bytes is smaller than the gradients), and the
loss; per evaluation the hit and total counts of the three splits, six
int64); nothing else is moved.

    mpi_equivalence.py ONE.json ONE_PARAMS N.json N_PARAMS
"""

import json
import os
import sys

import numpy as np


def compare(one_json, one_params, n_json, n_params):
    """The losses and trained parameters of a run on several processes
    against the run alone (exits with the first difference); returns both
    summaries, the largest rel-norm and the parameters' floats."""
    one, many = json.load(open(one_json)), json.load(open(n_json))
    a, b = one["history"], many["history"]
    if len(a) != len(b):
        sys.exit(f"{len(a)} epochs against {len(b)}")
    for x, y in zip(a, b):
        if abs(x["loss"] - y["loss"]) > 1e-5 + 1e-4 * abs(x["loss"]):
            sys.exit(f"epoch {x['epoch']}: loss {y['loss']} against {x['loss']} alone")
        # The evaluations too (the same parameters up to summation order:
        # an argmax near a tie may flip, so a small margin).
        for k in ("train_acc", "val_acc", "test_acc"):
            if (k in x) != (k in y) or abs(x.get(k, 0) - y.get(k, 0)) > 0.02:
                sys.exit(f"epoch {x['epoch']}: {k} {y.get(k)} against {x.get(k)} alone")

    names = sorted(f for f in os.listdir(one_params) if f.endswith(".npy"))
    if sorted(f for f in os.listdir(n_params) if f.endswith(".npy")) != names:
        sys.exit("not the same parameters saved")
    worst, floats = 0.0, 0
    for name in names:
        p, q = np.load(os.path.join(one_params, name)), np.load(os.path.join(n_params, name))
        rel = np.linalg.norm(p - q) / max(np.linalg.norm(p), np.linalg.norm(q), 1e-12)
        if rel >= 1e-4:
            sys.exit(f"{name}: relative difference {rel:.3g}")
        worst = max(worst, rel)
        floats += p.size
    return one, many, worst, floats


def all_reduce_formula(summary, floats):
    """Shared by every mode: the start-up fingerprint, --partition auto's
    vote when it made one (the summary's "auto": two int64), per epoch the
    gradients in one bucket and the loss, per evaluation six counts."""
    history = summary["history"]
    epochs = len(history)
    evals = sum(1 for h in history if "train_acc" in h)
    vote = summary.get("auto", {})
    # The gradients' buckets (--bucket-bytes): one per step by default.
    buckets = summary["communication"].get("gradient_buckets", epochs)
    return (1 + vote.get("allreduce_calls", 0) + buckets + epochs + evals,
            16 + vote.get("allreduce_bytes", 0) + epochs * (4 * floats + 4) + 48 * evals)


def check_formula(comm, expect):
    """Exits unless rank 0's counters (`comm`, the --json summary's
    "communication") and the driver's own formula from the program's
    collective records equal `expect`: {collective: (calls, bytes)}."""
    for name, (calls, nbytes) in expect.items():
        got = comm[name]
        if (got["calls"], got["bytes"]) != (calls, nbytes):
            sys.exit(f"{name}: {got['calls']} calls, {got['bytes']} bytes; the "
                     f"formula: {calls} calls, {nbytes} bytes")
        driver = comm.get("formula", {}).get(name)
        if driver and (driver["calls"], driver["bytes"]) != (calls, nbytes):
            sys.exit(f"{name}: the driver's formula {driver} differs")


def check_all_reduce_only(comm, calls, nbytes):
    """Exits unless rank 0's all-reduces (`comm`, the --json summary's
    "communication") are `calls` calls of `nbytes` bytes and no other
    collective moved anything."""
    got = comm["allreduce"]
    if (got["calls"], got["bytes"]) != (calls, nbytes):
        sys.exit(f"all-reduce {got['calls']} calls, {got['bytes']} bytes; "
                 f"the formula: {calls} calls, {nbytes} bytes")
    for other in ("broadcast", "reduce_scatter", "allgather", "alltoall"):
        if comm.get(other, {}).get("calls") or comm.get(other, {}).get("bytes"):
            sys.exit(f"{other}: {comm[other]}")


def main():
    one_json, one_params, n_json, n_params = sys.argv[1:5]
    one, many, worst, floats = compare(one_json, one_params, n_json, n_params)
    b = many["history"]
    comm, part = many["communication"], many["partition"]
    N = comm["world_size"]
    epochs = len(b)
    calls, nbytes = all_reduce_formula(many, floats)
    check_all_reduce_only(comm, calls, nbytes)
    print(f"{N} processes: {epochs} epochs, losses agree, parameters agree "
          f"(largest rel-norm {worst:.1e}); rank 0 holds {part['held_vertices']} "
          f"vertices with its {part['inner_end'] - part['inner_begin']}; "
          f"all-reduce {calls} calls, {nbytes} bytes = formula")


if __name__ == "__main__":
    main()
