"""Compares a mini-batch run with the features on storage against the same
run with them in memory (docs/MiniBatch.md, "The features on storage").

    stored_features_check.py MEMORY.json STORED.json VERTICES EVAL_BATCH \
        [MEMORY.npy STORED.npy]

The training losses agree within DESIGN.md's rule (each batch's rows are the
same values, read from storage); the evaluations agree: the loss within the
rule, each split's accuracy within one vertex in 250 (a vertex's logits come
from its full in-neighbourhood in an evaluation batch instead of the whole
graph: the same values up to the order of the sums, so only a tie can move
an argmax), the predictions on all but one vertex in 200. The stored run read
rows from storage (its counters), in ceil(VERTICES / EVAL_BATCH) evaluation
batches per evaluation.
"""

import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_run import compare_runs  # noqa: E402

mem, sto = (json.load(open(p)) for p in sys.argv[1:3])
vertices, eval_batch = int(sys.argv[3]), int(sys.argv[4])
epochs, evaluations = compare_runs(mem, sto)
stored = sto["mini_batch"].get("features_on_storage")
if not stored or "features_on_storage" in mem["mini_batch"]:
    sys.exit("the features were not on storage in the second run only")
if stored["read_bytes"] <= 0 or stored["reads"] <= 0:
    sys.exit(f"nothing read from storage: {stored}")
expected = math.ceil(vertices / eval_batch) * max(evaluations, 1)
if len(sys.argv) > 5:
    p, q = np.load(sys.argv[5]), np.load(sys.argv[6])
    if (p != q).sum() > len(p) / 200:
        sys.exit(f"{(p != q).sum()} of {len(p)} predictions differ")
    expected += math.ceil(vertices / eval_batch)
if stored["evaluation_batches"] != expected:
    sys.exit(f"{stored['evaluation_batches']} evaluation batches, not {expected}")
print(f"{epochs} epochs, losses agree, {evaluations} evaluations agree in "
      f"{expected} batches; read {stored['reads']} times")
