"""Checks P3 mini-batch training on several processes (docs/MiniBatch.md,
"P3 on several processes") against the same executable alone: the
per-epoch losses and the trained parameters as mpi_equivalence.py checks
them, then rank 0's collectives against the volumes exactly. Rank r of N
trains the share of each batch its seeds need; layer 1 of every share runs
on every process's feature columns, and the sync moves share s's first
n_k(s) rows (k = LEVEL, the level of the rows the sync's readers read on a
batch; one per sync, comma-separated, or one for all; F:B when its adjoint
moves level B's rows, where the gradient is zero beyond them; SYNCS as
EVAL/TRAIN where the evaluation's program syncs other widths than the
training step's, P³'s blocks program):

  - P3's pull: for each sync (widths SYNCS) rank 0 sends every other
    share's partial rows to its owner, sum over the batches and s != 0 of
    n_k(s) rows; the push: it sends its own gradient rows to the N - 1
    others, (N - 1) n_k(0) rows (all-to-all, two calls per sync and batch);
    the summary's mini_batch.p3 has the shares' rows per level summed over
    the batches;
  - the later layers run on the own share alone: no other collective in
    training; the full-graph evaluations move what feature partitioning's
    do (mpi_features_equivalence.py's formula with no training step: the
    SYNCS reduce-scattered, STAGED broadcast stages, GATHERS all-gathers);
  - the gradients' all-reduce, one per batch, leaves out the feature
    shards of the parameters SHARDED (their gradient is exact on each
    process);
  - so no feature value crosses processes.

    mpi_p3_equivalence.py ONE.json ONE_PARAMS N.json N_PARAMS DATASET LEVEL SYNCS STAGED GATHERS SHARDED

Widths are comma-separated integers or C, or "-" for none; SHARDED is
comma-separated parameter names.
"""

import json
import os
import sys

import numpy as np

from mpi_equivalence import check_formula, compare

(one_json, one_params, n_json, n_params, dataset, level, syncs, staged,
 gathers, sharded) = sys.argv[1:11]
one, many, worst, floats = compare(one_json, one_params, n_json, n_params)
meta = json.load(open(os.path.join(dataset, "meta.json")))


def widths(text):
    return [meta["num_classes"] if w == "C" else int(w)
            for w in text.split(",") if w not in ("", "-")]


# EVAL/TRAIN: the evaluation's syncs (the whole graph's program) and the
# training step's (P³'s blocks program, in another aggregation order).
eval_syncs, _, syncs = syncs.rpartition("/")
syncs, staged, gathers = widths(syncs), widths(staged), widths(gathers)
eval_syncs = widths(eval_syncs) if eval_syncs else syncs
levels = [tuple(int(x) for x in (l.split(":") * 2)[:2]) for l in level.split(",")]
if len(levels) == 1:
    levels *= len(syncs)
if len(levels) != len(syncs):
    sys.exit(f"{len(levels)} levels for {len(syncs)} syncs")
shard_floats = sum(np.load(os.path.join(one_params, name + ".npy")).size
                   for name in sharded.split(","))

comm, part, mb = many["communication"], many["partition"], many["mini_batch"]
N = comm["world_size"]
if part["mode"] != "features" or "p3" not in mb:
    sys.exit(f"partition mode {part['mode']}, mini_batch {mb}")
F = meta["num_features"]
if part["features"] != F or part["feature_end"] - part["feature_begin"] != F // N:
    sys.exit(f"rank 0 holds feature columns [{part['feature_begin']}, "
             f"{part['feature_end']}) of {part['features']}")
if mb["batches"] != one["mini_batch"]["batches"]:
    sys.exit(f"{mb['batches']} batches against {one['mini_batch']['batches']}")
own, other = mb["p3"]["own_share_rows"], mb["p3"]["other_share_rows"]
n, n0 = part["sources"], part["inner_end"] - part["inner_begin"]
history = many["history"]
epochs = len(history)
evals = sum(1 for h in history if "train_acc" in h)
batches = comm["gradient_buckets"]
if batches != mb["batches"]:
    sys.exit(f"{batches} gradient buckets for {mb['batches']} batches")
pulled = 4 * sum(w * other[f] for w, (f, _) in zip(syncs, levels))
pushed = 4 * sum(w * (N - 1) * own[b] for w, (_, b) in zip(syncs, levels))
rows = ", ".join(f"{other[f]} rows of level {f}"
                 for f in sorted(set(f for f, _ in levels)))
owned = " + ".join(f"{own[b]}" for _, b in levels)
expect = {
    "alltoall": (2 * len(syncs) * mb["batches"], pulled + pushed),
    "reduce_scatter": (evals * len(eval_syncs), 4 * n * evals * sum(eval_syncs)),
    "allgather": (evals * len(gathers), 4 * n0 * evals * sum(gathers)),
    "broadcast": (evals * N * len(staged), 4 * n * evals * sum(staged)),
    "allreduce": (1 + batches + epochs + evals,
                  16 + batches * 4 * (floats - shard_floats) + 4 * epochs + 48 * evals),
}
check_formula(comm, expect)
print(f"{N} processes: {epochs} epochs of {mb['batches'] // epochs} batches, "
      f"losses agree, parameters agree (largest rel-norm {worst:.1e}); rank 0 "
      f"holds feature columns [{part['feature_begin']}, {part['feature_end']}) "
      f"of {F}; all-to-all {expect['alltoall'][0]} calls: {pulled} bytes of "
      f"partials pulled to the owners ({rows}), {pushed} "
      f"of gradients pushed ((N - 1) x {owned} rows); evaluations, all-reduce "
      f"without {shard_floats} shard floats = formula")
