"""Checks data-parallel mini-batch training on several processes against
the run alone (docs/MiniBatch.md, "On several processes"): the per-epoch
losses and the trained parameters within DESIGN.md's rules
(mpi_equivalence.compare), every process holding the whole graph, and
rank 0's collectives equal to the formula exactly:

    all-reduce calls = 1 + buckets + epochs + evaluations
    all-reduce bytes = 16 + batches 4 P + 4 epochs + 48 evaluations

(16: the start-up fingerprint; per batch the gradients, P floats, in the
summary's gradient_buckets (one per batch unless --bucket-bytes is
smaller); per epoch the loss; per evaluation six int64 counts); nothing
else is moved.

With the features split by rows (--partition pull, docs/MiniBatch.md,
"Feature pulling"; DATASET given), the process holds its range of the
equal vertex split into G = N / copies ranges (--feature-copies), V / G
rows, its memory check counts every row
(the evaluation binds them all: the summary's memory.estimate.features
= 4 V F), and besides those all-reduces it moves exactly:

    all-to-all calls = 3 batches (the counts, the ids, the rows)
    all-to-all bytes = 8 (batches (N - 1) + pulled rows) + 4 F rows given
    all-gather calls = 1 + evaluations (every row for the whole graph's
                       binding: at the start and before each evaluation)
    all-gather bytes = calls 4 F floor(V / G)

    mpi_minibatch_equivalence.py ONE.json ONE_PARAMS N.json N_PARAMS [DATASET]
"""

import os
import sys

import numpy as np

from mpi_equivalence import check_all_reduce_only, compare


def check_pulls(summary, calls, nbytes, evals, dataset):
    """Exits unless rank 0's collectives are the gradients' all-reduces
    (`calls`, `nbytes`) and the feature pulls' formulas above."""
    comm, mb = summary["communication"], summary["mini_batch"]
    got = comm["allreduce"]
    if (got["calls"], got["bytes"]) != (calls, nbytes):
        sys.exit(f"all-reduce {got} against {calls} calls, {nbytes} bytes")
    N, pull, F = comm["world_size"], mb["pull"], mb["features"]
    V = np.load(os.path.join(dataset, "indptr.npy"), mmap_mode="r").size - 1
    estimate = summary["memory"]["estimate"]["features"]
    if estimate != 4 * V * F:
        sys.exit(f"the memory check counted {estimate} bytes of features, "
                 f"every row is {4 * V * F}")
    requests = 8 * (mb["batches"] * (N - 1) + pull["pulled_rows"])
    if pull["request_bytes_sent"] != requests:
        sys.exit(f"request bytes {pull} against the formula {requests}")
    if pull["feature_bytes_sent"] % (4 * F):
        sys.exit(f"feature bytes {pull} are not whole rows of {F}")
    want = {"alltoall": (3 * mb["batches"],
                         requests + pull["feature_bytes_sent"]),
            "allgather": (1 + evals,
                          (1 + evals) * 4 * F * (V // (N // pull["copies"]))),
            "broadcast": (0, 0), "reduce_scatter": (0, 0)}
    for name, (c, b) in want.items():
        if (comm[name]["calls"], comm[name]["bytes"]) != (c, b):
            sys.exit(f"{name}: {comm[name]} against {c} calls, {b} bytes")
    return (f"; {pull['copies']} copies, pulled {pull['pulled_rows']} rows, "
            f"{pull['own_rows']} own, "
            f"all-to-all and all-gather = formula")


def main():
    one, many, worst, floats = compare(*sys.argv[1:5])
    comm, part = many["communication"], many["partition"]
    mb_one, mb = one["mini_batch"], many["mini_batch"]
    if part["mode"] not in ("data-parallel", "pull"):
        sys.exit(f"partition mode {part['mode']}")
    if mb["batches"] != mb_one["batches"] or \
            mb["sampled_edges"] != mb_one["sampled_edges"]:
        sys.exit(f"batches or sampled edges differ: {mb} against {mb_one}")
    if mb["processes"] != comm["world_size"] or mb_one["processes"] != 1:
        sys.exit(f"processes: {mb['processes']} of {comm['world_size']}")
    history = many["history"]
    epochs = len(history)
    evals = sum(1 for h in history if "train_acc" in h)
    buckets = comm["gradient_buckets"]
    if buckets < mb["batches"]:
        sys.exit(f"{buckets} gradient buckets for {mb['batches']} batches")
    calls = 1 + buckets + epochs + evals
    nbytes = 16 + mb["batches"] * 4 * floats + 4 * epochs + 48 * evals
    pulls = ""
    if part["mode"] == "pull":
        pulls = check_pulls(many, calls, nbytes, evals, sys.argv[5])
    else:
        check_all_reduce_only(comm, calls, nbytes)
    print(f"{comm['world_size']} processes: {epochs} epochs of "
          f"{mb['batches'] // epochs} batches, losses agree, parameters agree "
          f"(largest rel-norm {worst:.1e}); all-reduce {calls} calls, "
          f"{nbytes} bytes = formula{pulls}")


if __name__ == "__main__":
    main()
