"""Compares two runs' --json summaries, and their saved parameters when
given, under DESIGN.md's rule: each epoch's loss and the final loss
(relative 1e-4, absolute 1e-5), each evaluation's accuracies (within one
vertex in 250: only a tie can move an argmax), each parameter's relative
difference in norm (1e-4).

    same_run.py A.json B.json [A_PARAMS B_PARAMS]
"""

import json
import os
import sys

import numpy as np

SPLITS = ("train_acc", "val_acc", "test_acc")


def close(x, y):
    return abs(x - y) <= 1e-5 + 1e-4 * abs(y)


def compare_runs(a, b):
    """Exits with the first difference of summaries `a` and `b` (history and
    final); returns the epochs and the evaluations compared."""
    ha, hb = a["history"], b["history"]
    if len(ha) != len(hb):
        sys.exit(f"{len(ha)} epochs against {len(hb)}")
    evaluations = 0
    for x, y in zip(ha, hb):
        if not close(y["loss"], x["loss"]):
            sys.exit(f"epoch {x['epoch']}: loss {y['loss']} against {x['loss']}")
        for split in SPLITS:
            if (split in x) != (split in y):
                sys.exit(f"epoch {x['epoch']}: evaluated in one run only")
            if split in x and abs(x[split] - y[split]) > 1 / 250:
                sys.exit(f"epoch {x['epoch']}: {split} {y[split]} against {x[split]}")
        evaluations += "val_acc" in x
    fa, fb = a["final"], b["final"]
    if not close(fb["loss"], fa["loss"]):
        sys.exit(f"final loss {fb['loss']} against {fa['loss']}")
    for split in SPLITS:
        if abs(fa[split] - fb[split]) > 1 / 250:
            sys.exit(f"final {split} {fb[split]} against {fa[split]}")
    return len(ha), evaluations


def compare_params(pa, pb):
    """Exits with the first parameter of directories `pa` and `pb` that
    differs; returns how many were compared."""
    names = sorted(os.listdir(pa))
    if names != sorted(os.listdir(pb)):
        sys.exit(f"parameters {names} against {sorted(os.listdir(pb))}")
    for n in names:
        x, y = np.load(os.path.join(pa, n)), np.load(os.path.join(pb, n))
        if x.shape != y.shape:
            sys.exit(f"{n}: shape {y.shape} against {x.shape}")
        if np.linalg.norm(x - y) > 1e-4 * max(np.linalg.norm(x), 1e-12):
            sys.exit(f"{n}: relative difference "
                     f"{np.linalg.norm(x - y) / np.linalg.norm(x):.3g}")
    return len(names)


def main():
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    epochs, evaluations = compare_runs(a, b)
    what = f"{epochs} epochs: losses, {evaluations} evaluations"
    if len(sys.argv) > 3:
        what += f" and {compare_params(*sys.argv[3:5])} parameters"
    print(what + " agree")


if __name__ == "__main__":
    main()
