"""permute.test's check: the losses of the two runs within DESIGN.md's rule
(relative 1e-4, absolute 1e-5) and pred_b[perm[v]] == pred_a[v] with perm
the seed-1 permutation gnnc.data permute draws."""
import json
import sys

import numpy as np

a, b = (json.load(open(p))["history"] for p in sys.argv[1:3])
if len(a) != len(b):
    sys.exit(f"{len(a)} epochs against {len(b)}")
for x, y in zip(a, b):
    if abs(x["loss"] - y["loss"]) > 1e-5 + 1e-4 * abs(x["loss"]):
        sys.exit(f"epoch {x['epoch']}: {y['loss']} permuted against {x['loss']}")
pa, pb = np.load(sys.argv[3]), np.load(sys.argv[4])
perm = np.random.default_rng(1).permutation(len(pa))
bad = np.count_nonzero(pb[perm] != pa)
if bad:
    sys.exit(f"{bad} predictions differ")
print(f"{len(a)} epochs: the same losses; every prediction moved with its vertex")
