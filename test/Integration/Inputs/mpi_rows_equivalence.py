"""Checks a row-partitioned run on several processes (gnn-compile --partition
rows) against the same executable alone: losses and trained parameters as
mpi_equivalence.py checks them, then rank 0's collectives against MG-GCN's
volumes exactly. With n vertices, rank 0's n0 = floor(n / N) own rows, and
the row widths s of the rows the model's layers read at edge sources (in
the forward: once in the training step and once in each evaluation),
STAGED where an SpMM to the destinations reads them (N broadcasts, one per
owner: gnnrtSpmmBroadcast), GATHERS where other kernels do (one
all-gather), and of the training step's reduce-scatters (their gradients,
SCATTERS), F and C taken from the dataset's meta.json:

    broadcast calls      = (epochs + evals) x N |STAGED|
    broadcast bytes      = 4 n (epochs + evals) x sum STAGED
    all-gather calls     = (epochs + evals) x |GATHERS|
    all-gather bytes     = 4 n0 (epochs + evals) x sum GATHERS
    reduce-scatter calls = epochs x (N |staged SCATTERS| + |other SCATTERS|)
    reduce-scatter bytes = 4 n epochs x sum SCATTERS

(a broadcast counts its rows on every rank, a rank sends its own rows to
an all-gather and its partial sums for every vertex to a reduce-scatter:
MG-GCN's broadcasts of H and their adjoint; a rank receives (n - n0) s 4
bytes per staged SpMM or all-gather, (N - 1) n0 s 4 per reduce-scatter),
plus mpi_equivalence.py's all-reduces (gradients, loss, evaluation
counts).

    mpi_rows_equivalence.py ONE.json ONE_PARAMS N.json N_PARAMS DATASET STAGED GATHERS SCATTERS

STAGED, GATHERS and SCATTERS: comma-separated widths (integers, F, C), or
"-" for none; a scatter width after "~" is staged (gnnrtSpmmReduce: one
reduce to each owner, N per reduce-scatter). STAGED and GATHERS may be
TRAIN/EVAL, the training step's widths and the evaluation's, where they
differ (a compiled kernel's rows arrive in stages where it is their one
reader: in the evaluation of GAT, whose training step reads them again
in the backward); in the formulas above the training step's count once
per epoch and the evaluation's once per evaluation.
"""

import json
import os
import sys

from mpi_equivalence import all_reduce_formula, check_formula, compare

one_json, one_params, n_json, n_params, dataset, staged, gathers, scatters = sys.argv[1:9]
one, many, worst, floats = compare(one_json, one_params, n_json, n_params)
meta = json.load(open(os.path.join(dataset, "meta.json")))


def widths(text, marked=False):
    names = {"F": meta["num_features"], "C": meta["num_classes"]}
    out = []
    for w in text.split(","):
        if w in ("", "-"):
            continue
        tilde = w.startswith("~")
        w = w.lstrip("~")
        value = names[w] if w in names else int(w)
        out.append((value, tilde) if marked else value)
    return out




def per_function(text):
    train, _, evaluation = text.partition("/")
    return widths(train), widths(evaluation if _ else train)


(staged, eval_staged), (gathers, eval_gathers) = per_function(staged), per_function(gathers)
marked = widths(scatters, marked=True)
scatters = [w for w, _ in marked]
staged_scatters = sum(1 for _, tilde in marked if tilde)
comm, part = many["communication"], many["partition"]
N = comm["world_size"]
if part["mode"] != "rows":
    sys.exit(f"partition mode {part['mode']}")
n, n0 = part["sources"], part["inner_end"] - part["inner_begin"]
if part["inner_begin"] != 0 or part["held_vertices"] != n0 or \
        (part["split"] == "vertices" and n0 != n // N):
    sys.exit(f"rank 0 owns [{part['inner_begin']}, {part['inner_end']}) of {n}")
if part["repartitions"]:
    # Rank 0's rows changed during the run: its volumes are not one n0's.
    print(f"{N} processes: {len(many['history'])} epochs, losses agree, parameters "
          f"agree (largest rel-norm {worst:.1e}); split {part['split']}, "
          f"{part['repartitions']} repartition(s), rank 0 ends with {n0} of {n} vertices")
    sys.exit(0)
history = many["history"]
epochs = len(history)
evals = sum(1 for h in history if "train_acc" in h)


def per_run(train, evaluation):
    """What the training steps and the evaluations move together."""
    return epochs * train + evals * evaluation


expect = {
    "allgather": (per_run(len(gathers), len(eval_gathers)),
                  4 * n0 * per_run(sum(gathers), sum(eval_gathers))),
    "reduce_scatter": (epochs * (N * staged_scatters + len(scatters) - staged_scatters),
                       4 * n * epochs * sum(scatters)),
    "allreduce": all_reduce_formula(many, floats),
    "broadcast": (N * per_run(len(staged), len(eval_staged)),
                  4 * n * per_run(sum(staged), sum(eval_staged))),
}
check_formula(comm, expect)
received = ((n - n0) * per_run(sum(staged) + sum(gathers), sum(eval_staged) + sum(eval_gathers)) * 4
            + epochs * (N - 1) * n0 * sum(scatters) * 4)
print(f"{N} processes: {epochs} epochs, losses agree, parameters agree "
      f"(largest rel-norm {worst:.1e}); rank 0 owns {n0} of {n} vertices and "
      f"{part['held_edges']} in-edges; broadcast {expect['broadcast'][0]} calls, "
      f"{expect['broadcast'][1]} bytes, all-gather {expect['allgather'][0]} calls, "
      f"{expect['allgather'][1]} bytes, reduce-scatter {expect['reduce_scatter'][0]} "
      f"calls, {expect['reduce_scatter'][1]} bytes, all-reduce "
      f"{expect['allreduce'][0]} calls = formula; received {received} bytes")
