"""A dataset with locality for the multi-process tests: a W x W grid
(vertex r * W + c, 4-neighbour edges both ways, self-loops) plus a few random
long edges, random features, labels that depend on them, three edge types.
A rank's vertex range is a band of rows, and its closure of h hops the band
with h rows on either side and the long edges' ends: a true part of the graph.

    grid_dataset.py DIR [--width W] [--seed S]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python"))
from gnnc.data import from_edges, save  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("output")
p.add_argument("--width", type=int, default=40)
p.add_argument("--seed", type=int, default=1)
args = p.parse_args()
rng = np.random.default_rng(args.seed)
W = args.width
V = W * W
ids = np.arange(V).reshape(W, W)
src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel(), rng.integers(0, V, 8)])
dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel(), rng.integers(0, V, 8)])
keep = src != dst
src, dst = src[keep], dst[keep]
features = rng.standard_normal((V, 8)).astype(np.float32)
labels = (features[:, :3] @ rng.standard_normal((3, 3))).argmax(1)
types = rng.integers(0, 3, src.size).astype(np.int32)
ds = from_edges(src, dst, V, features=features, labels=labels, num_classes=3,
                name=f"grid-{W}", source="test/Integration/Inputs/grid_dataset.py",
                symmetrize=True, self_loops=True, edge_data={"type": types},
                seed=args.seed)
save(ds, args.output)
