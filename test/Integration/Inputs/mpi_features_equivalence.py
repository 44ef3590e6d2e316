"""Checks a feature-partitioned run on several processes (gnn-compile
--partition features, P3 in its full-graph form) against the same
executable alone: losses and trained parameters as mpi_equivalence.py
checks them, then rank 0's collectives against the volumes exactly. With n
vertices, rank 0's n0 own rows and N processes:

  - layer 1's syncs (the partial sums of its first contraction, widths
    SYNCS) are reduce-scattered in the training step and in each
    evaluation, and their gradients pushed to every process by one
    all-gather each in the training step (P3's pull of the partial
    activations and push of the error gradient);
  - the later layers move rows as row partitioning does (STAGED: staged
    SpMM broadcasts; GATHERS: all-gathers, both in the training step and in
    each evaluation; SCATTERS: the training step's reduce-scatters, "~" for
    a staged one, N reduces);
  - the gradients' all-reduce leaves out the feature shards of the
    parameters SHARDED (their gradient is exact on each process);
  - no feature value crosses processes.

    reduce-scatter calls = (epochs + evals) |SYNCS| + epochs (N |staged| + |other|)
    reduce-scatter bytes = 4 n ((epochs + evals) sum SYNCS + epochs sum SCATTERS)
    all-gather calls     = epochs |SYNCS| + (epochs + evals) |GATHERS|
    all-gather bytes     = 4 n0 (epochs sum SYNCS + (epochs + evals) sum GATHERS)
    broadcast calls      = (epochs + evals) N |STAGED|
    broadcast bytes      = 4 n (epochs + evals) sum STAGED

    mpi_features_equivalence.py ONE.json ONE_PARAMS N.json N_PARAMS DATASET SYNCS STAGED GATHERS SCATTERS SHARDED

Widths are comma-separated integers, F or C, or "-" for none; SHARDED is
comma-separated parameter names. STAGED and GATHERS may be TRAIN/EVAL
where the training step's and the evaluation's differ (as in
mpi_rows_equivalence.py); the training step's then count once per epoch,
the evaluation's once per evaluation.
"""

import json
import os
import sys

import numpy as np

from mpi_equivalence import all_reduce_formula, check_formula, compare

(one_json, one_params, n_json, n_params, dataset, syncs, staged, gathers,
 scatters, sharded) = sys.argv[1:11]
one, many, worst, floats = compare(one_json, one_params, n_json, n_params)
meta = json.load(open(os.path.join(dataset, "meta.json")))


def widths(text):
    names = {"F": meta["num_features"], "C": meta["num_classes"]}
    return [(names.get(w.lstrip("~")) or int(w.lstrip("~")), w.startswith("~"))
            for w in text.split(",") if w not in ("", "-")]


syncs = [w for w, _ in widths(syncs)]


def per_function(text):
    train, slash, evaluation = text.partition("/")
    return ([w for w, _ in widths(train)],
            [w for w, _ in widths(evaluation if slash else train)])


staged, eval_staged = per_function(staged)
gathers, eval_gathers = per_function(gathers)
marked = widths(scatters)
scatters = [w for w, _ in marked]
staged_scatters = sum(1 for _, tilde in marked if tilde)
shard_floats = sum(np.load(os.path.join(one_params, name + ".npy")).size
                   for name in sharded.split(","))

comm, part = many["communication"], many["partition"]
N = comm["world_size"]
if part["mode"] != "features":
    sys.exit(f"partition mode {part['mode']}")
n, n0 = part["sources"], part["inner_end"] - part["inner_begin"]
F = meta["num_features"]
if part["features"] != F or part["feature_begin"] != 0 or \
        part["feature_end"] != F // N or part["whole_edges"] != meta["num_edges"]:
    sys.exit(f"rank 0 holds feature columns [{part['feature_begin']}, "
             f"{part['feature_end']}) of {part['features']}")
history = many["history"]
epochs = len(history)
evals = sum(1 for h in history if "train_acc" in h)
runs = epochs + evals
expect = {
    "reduce_scatter": (runs * len(syncs) + epochs * (N * staged_scatters + len(scatters) - staged_scatters),
                       4 * n * (runs * sum(syncs) + epochs * sum(scatters))),
    "allgather": (epochs * (len(syncs) + len(gathers)) + evals * len(eval_gathers),
                  4 * n0 * (epochs * (sum(syncs) + sum(gathers)) + evals * sum(eval_gathers))),
    "broadcast": (N * (epochs * len(staged) + evals * len(eval_staged)),
                  4 * n * (epochs * sum(staged) + evals * sum(eval_staged))),
    "allreduce": all_reduce_formula(many, floats - shard_floats),
}
check_formula(comm, expect)
# What rank 0 receives of layer 1: the other processes' partials of its own
# rows (P3's pull), every other vertex's gradient rows (the push).
pulled = runs * (N - 1) * n0 * sum(syncs) * 4
pushed = epochs * (n - n0) * sum(syncs) * 4
print(f"{N} processes: {epochs} epochs, losses agree, parameters agree "
      f"(largest rel-norm {worst:.1e}); rank 0 holds feature columns "
      f"[0, {part['feature_end']}) of {F} of all {n} vertices and owns {n0}; "
      f"reduce-scatter {expect['reduce_scatter'][0]} calls, "
      f"{expect['reduce_scatter'][1]} bytes, all-gather {expect['allgather'][0]} "
      f"calls, {expect['allgather'][1]} bytes, broadcast {expect['broadcast'][0]} "
      f"calls, all-reduce without {shard_floats} shard floats = formula; "
      f"layer 1 received {pulled} bytes of partials, {pushed} of gradients")
