"""Checks P3 training with the structure partitioned by hash (--structure
hash; docs/MiniBatch.md, "The structure partitioned by hash") against the
same run with the structure replicated, on N processes:

  - the same batches, so the same training: every epoch's loss and
    accuracies equal, and the saved parameters byte for byte;
  - rank 0 holds the in-edges of exactly the vertices v with
    splitmix64(v ^ salt) mod N = 0 (recomputed here from the dataset's
    CSC), and the bytes its shard's arrays take;
  - its collectives are the replicated run's plus the structure's pushes:
    the all-gathers' calls and bytes are what mini_batch.p3.structure
    reports pushed, every other collective the same calls and bytes (but
    one all-reduce of an int64: the processes agree on the sampling
    thread);
  - each full-graph evaluation read the whole graph from storage once.

    p3_hash_structure.py REPLICATED.json REPLICATED_PARAMS HASH.json
                         HASH_PARAMS DATASET N
"""
import json
import os
import sys

import numpy as np

MASK = (1 << 64) - 1
SALT = 0x94D049BB133111EB


def mix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    rep_json, rep_params, hash_json, hash_params, data, n = sys.argv[1:7]
    n = int(n)
    rep = json.load(open(rep_json))
    got = json.load(open(hash_json))
    keys = ("loss", "train_acc", "val_acc", "test_acc")
    for a, b in zip(rep["history"], got["history"]):
        if any(a[k] != b[k] for k in keys):
            fail("epoch %d differs: %s against %s" % (a["epoch"], a, b))
    if len(rep["history"]) != len(got["history"]) or rep["final"] != got["final"]:
        fail("the runs' histories or final results differ")
    names = sorted(os.listdir(rep_params))
    if not names or names != sorted(os.listdir(hash_params)):
        fail("the runs saved different parameters")
    for name in names:
        with open(os.path.join(rep_params, name), "rb") as f:
            a = f.read()
        with open(os.path.join(hash_params, name), "rb") as f:
            b = f.read()
        if a != b:
            fail("parameter %s differs" % name)

    s = got["mini_batch"]["p3"]["structure"]
    if rep["mini_batch"]["p3"]["structure"] != {"partition": "replicated"}:
        fail("the replicated run reports %s" % rep["mini_batch"]["p3"]["structure"])
    if s["partition"] != "hash":
        fail("the hash run reports %s" % s)
    indptr = np.load(os.path.join(data, "indptr.npy")).astype(np.int64)
    V = len(indptr) - 1
    owned = [v for v in range(V) if mix64(v ^ SALT) % n == 0]
    edges = int(sum(indptr[v + 1] - indptr[v] for v in owned))
    if s["held_vertices"] != len(owned) or s["held_edges"] != edges:
        fail("rank 0 holds %d vertices and %d edges, but owns %d and %d"
             % (s["held_vertices"], s["held_edges"], len(owned), edges))
    if s["held_bytes"] != 8 * (3 * len(owned) + 1) + 4 * edges:
        fail("held_bytes %d" % s["held_bytes"])
    if not 0 < edges < indptr[-1]:
        fail("rank 0 holds %d of %d edges" % (edges, indptr[-1]))

    rc, gc = rep["communication"], got["communication"]
    # The hash run's one all-reduce beyond: the processes agree on the
    # thread that samples (one int64).
    extra = {"allreduce": (1, 8)}
    for c in ("allreduce", "broadcast", "reduce_scatter", "alltoall"):
        calls, size = extra.get(c, (0, 0))
        if (rc[c]["calls"] + calls, rc[c]["bytes"] + size) != \
                (gc[c]["calls"], gc[c]["bytes"]):
            fail("%s: %s against %s" % (c, rc[c], gc[c]))
    pushes = gc["allgather"]["calls"] - rc["allgather"]["calls"]
    pushed = gc["allgather"]["bytes"] - rc["allgather"]["bytes"]
    if (pushes, pushed) != (s["pushes"], s["pushed_bytes"]) or pushed <= 0:
        fail("all-gathers: %d calls and %d bytes beyond the replicated run's, "
             "but %s pushed" % (pushes, pushed, s))
    evaluations = len(got["history"])
    if s["whole_graph_reads"] != evaluations:
        fail("%d reads of the whole graph for %d evaluations"
             % (s["whole_graph_reads"], evaluations))
    print("%d processes: %d epochs agree, parameters byte for byte; rank 0 "
          "holds %d of %d vertices, %d of %d edges (%d bytes); pushed %d "
          "bytes in %d all-gathers, every other collective as replicated (+1 all-reduce); "
          "%d whole-graph reads"
          % (n, len(got["history"]), len(owned), V, edges, indptr[-1],
             s["held_bytes"], pushed, pushes, s["whole_graph_reads"]))


if __name__ == "__main__":
    main()
