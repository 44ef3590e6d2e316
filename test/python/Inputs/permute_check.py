"""permute.test's check of the predictions: pred_b[perm[v]] == pred_a[v]
with perm the seed-1 permutation gnnc.data permute draws (the losses are
same_losses.py's).

    permute_check.py A.npy B.npy
"""
import sys

import numpy as np

pa, pb = np.load(sys.argv[1]), np.load(sys.argv[2])
perm = np.random.default_rng(1).permutation(len(pa))
bad = np.count_nonzero(pb[perm] != pa)
if bad:
    sys.exit(f"{bad} predictions differ")
print(f"{len(pa)} predictions, every one moved with its vertex")
