"""Checks co-batch mini-batch training on several processes (GraNNDis's
cooperative batching, fetch-then-split; docs/MiniBatch.md, "Co-batches")
against the same executable alone: the per-epoch losses and the trained
parameters as mpi_equivalence.py checks them, then rank 0's collectives
against the volumes exactly. Each batch's whole subgraph (n rows) is split
by rows, rank 0 owning n0 of them; the row-partitioned program moves, per
batch (the summary's mini_batch.co_batch: n and n0 summed over the
batches):

    broadcast calls = batches N |STAGED|,   bytes = 4 sum_k w_k n_{l_k}
    all-gather calls = batches |GATHERS|,   bytes = 4 n0 sum GATHERS
    reduce-scatter calls = batches (N |~| + |other|),
                   bytes = 4 sum_k w_k n_{l_k} over SCATTERS
    all-reduce: the gradients per batch, the loss per epoch, the
                evaluations' counts (data parallel's formula)

(N: the processes of a co-batch, mini_batch.co_batch.server_processes:
every process, or a server's of --server-processes, whose co-batch is its
share of each batch's seeds; STAGED: staged aggregations, N broadcasts
each, as w:l, width w reading sources of level l: each process broadcasts
its rows of that level, n_l over the co-batch's processes, rank 0's
co-batches' level rows summed (mini_batch.co_batch.level_rows, the
batches' mini_batch.level_rows when a co-batch spans every process; l = 0
when left out: every row, n); SCATTERS: the backward's
reduce-scatters, "~" for a staged one, N reduces, w:l as for STAGED: a
staged one reduces its owners' rows of level l, where its sums may be
non-zero); the evaluations run on the whole graph in every process and
move nothing else.

    mpi_cobatch_equivalence.py ONE.json ONE_PARAMS N.json N_PARAMS DATASET STAGED GATHERS SCATTERS

Widths are comma-separated integers, F or C (the dataset's meta.json), or
"-" for none.
"""

import json
import os
import sys

from mpi_equivalence import check_formula, compare

one, many, worst, floats = compare(*sys.argv[1:5])
meta = json.load(open(os.path.join(sys.argv[5], "meta.json")))


def widths(text):
    names = {"F": meta["num_features"], "C": meta["num_classes"]}
    return [(names.get(w.lstrip("~")) or int(w.lstrip("~")), w.startswith("~"))
            for w in text.split(",") if w not in ("", "-")]


staged_text = [w.split(":") for w in sys.argv[6].split(",") if w not in ("", "-")]
staged = [w for w, _ in widths(",".join(w[0] for w in staged_text))]
staged_levels = [int(w[1]) if len(w) > 1 else 0 for w in staged_text]
gathers = [w for w, _ in widths(sys.argv[7])]
scatter_text = [w.split(":") for w in sys.argv[8].split(",") if w not in ("", "-")]
marked = widths(",".join(w[0] for w in scatter_text))
scatters = [w for w, _ in marked]
scatter_levels = [int(w[1]) if len(w) > 1 else 0 for w in scatter_text]
staged_scatters = sum(1 for _, tilde in marked if tilde)

comm, part, mb = many["communication"], many["partition"], many["mini_batch"]
if part["mode"] != "co-batch" or "co_batch" not in mb:
    sys.exit(f"partition mode {part['mode']}, mini_batch {mb}")
# A co-batch per server: N processes share each co-batch, and the level
# rows are rank 0's server's co-batches' (a share of the batches' seeds).
N = mb["co_batch"]["server_processes"]
world = comm["world_size"]
if world % N:
    sys.exit(f"{N} processes per co-batch on {world}")
if mb["batches"] != one["mini_batch"]["batches"] or \
        mb["sampled_edges"] != one["mini_batch"]["sampled_edges"]:
    sys.exit(f"batches or sampled edges differ: {mb} against {one['mini_batch']}")
n, n0, batches = mb["co_batch"]["rows"], mb["co_batch"]["own_rows"], mb["batches"]
levels = mb["co_batch"]["level_rows"]
if n != levels[0]:
    sys.exit(f"co-batch rows {n} against its levels' {levels[0]}")
if (N == world) != (levels == mb["level_rows"]):
    sys.exit(f"co-batches of {N} of {world} processes with level rows "
             f"{levels}, the batches' {mb['level_rows']}")
history = many["history"]
epochs = len(history)
evals = sum(1 for h in history if "train_acc" in h)
buckets = comm["gradient_buckets"]
# A co-batch of one process moves no rows.
split = 1 if N > 1 else 0
expect = {
    "broadcast": (split * batches * N * len(staged),
                  split * 4 * sum(w * levels[l] for w, l in zip(staged, staged_levels))),
    "allgather": (split * batches * len(gathers), split * 4 * n0 * sum(gathers)),
    "reduce_scatter": (split * batches * (N * staged_scatters + len(scatters) - staged_scatters),
                       split * 4 * sum(w * levels[l]
                               for w, l in zip(scatters, scatter_levels))),
    "allreduce": (1 + buckets + epochs + evals,
                  16 + batches * 4 * floats + 4 * epochs + 48 * evals),
}
check_formula(comm, expect)
server = f" (co-batches of {N})" if N < world else ""
print(f"{world} processes{server}: {epochs} epochs of {batches // epochs} batches, losses "
      f"agree, parameters agree (largest rel-norm {worst:.1e}); rank 0 owns "
      f"{n0} of the batches' {n} rows; broadcast {expect['broadcast'][0]} calls, "
      f"{expect['broadcast'][1]} bytes, all-gather {expect['allgather'][0]} calls, "
      f"reduce-scatter {expect['reduce_scatter'][0]} calls, "
      f"{expect['reduce_scatter'][1]} bytes, all-reduce = formula")
