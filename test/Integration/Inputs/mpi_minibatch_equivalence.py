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

    mpi_minibatch_equivalence.py ONE.json ONE_PARAMS N.json N_PARAMS
"""

import sys

from mpi_equivalence import check_all_reduce_only, compare


def main():
    one, many, worst, floats = compare(*sys.argv[1:5])
    comm, part = many["communication"], many["partition"]
    mb_one, mb = one["mini_batch"], many["mini_batch"]
    if part["mode"] != "data-parallel":
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
    check_all_reduce_only(comm, calls, nbytes)
    print(f"{comm['world_size']} processes: {epochs} epochs of "
          f"{mb['batches'] // epochs} batches, losses agree, parameters agree "
          f"(largest rel-norm {worst:.1e}); all-reduce {calls} calls, "
          f"{nbytes} bytes = formula")


if __name__ == "__main__":
    main()
