"""A directed graph with 3 edge types whose last quarter of vertices has no
in-edge (empty rows for a mean or a max to finish), for row-partitioned
kernels over every source of a process's own rows.

    directed_typed_dataset.py OUT [--seed S]
"""

import argparse

import numpy as np

from gnnc.data import from_edges, save

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("--seed", type=int, default=5)
args = parser.parse_args()
rng = np.random.default_rng(args.seed)
V, E = 400, 1500
src = rng.integers(0, V, E)
dst = rng.integers(0, 3 * V // 4, E)
keep = src != dst
src, dst = src[keep], dst[keep]
features = rng.standard_normal((V, 8)).astype(np.float32)
labels = (features[:, :3] @ rng.standard_normal((3, 3))).argmax(1)
types = rng.integers(0, 3, src.size).astype(np.int32)
save(from_edges(src, dst, V, features=features, labels=labels, num_classes=3,
                name="directed-typed", source="directed_typed_dataset.py",
                directed=True, edge_data={"type": types}, seed=1), args.out)
