"""Writes an RMAT dataset (with self-loops: every vertex has an in-edge)
whose edges carry a random positive f32 "weight" (for weighted_gcn.mlir).

    weighted_dataset.py OUT_DIR
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python"))
from gnnc.data import rmat, save  # noqa: E402


def main():
    ds = rmat(4096, 20000, num_features=16, num_classes=4, seed=11)
    rng = np.random.default_rng(12)
    ds.edge_data["weight"] = rng.uniform(0.5, 2.0, ds.num_edges).astype(np.float32)
    save(ds, sys.argv[1])


if __name__ == "__main__":
    main()
