"""Compares each model's evaluations of minibatch-layerwise.test: DIR/M-never
.json (the whole graph) and DIR/M-always.json (layer-wise), written by
--epochs 0: the loss within relative 1e-5, the accuracies equal (the
predictions are compared by cmp), and the layer-wise run's levels.

    same_evaluation.py DIR MODEL...
"""

import json
import os
import sys


def main():
    directory, models = sys.argv[1], sys.argv[2:]
    levels = []
    for m in models:
        whole, layered = (json.load(open(os.path.join(directory, f"{m}-{mode}.json")))
                          for mode in ("never", "always"))
        a, b = whole["final"], layered["final"]
        if abs(a["loss"] - b["loss"]) > 1e-5 * abs(a["loss"]):
            sys.exit(f"{m}: loss {b['loss']} layer-wise against {a['loss']}")
        for split in ("train_acc", "val_acc", "test_acc"):
            if a[split] != b[split]:
                sys.exit(f"{m}: {split} {b[split]} layer-wise against {a[split]}")
        if "layerwise" in whole["mini_batch"]:
            sys.exit(f"{m}: --layerwise-eval never ran layer-wise")
        w = layered["mini_batch"].get("layerwise")
        if not w or w["evaluations"] < 1 or w["batches"] < w["levels"]:
            sys.exit(f"{m}: not evaluated layer-wise: {w}")
        levels.append(w["levels"])
    print(f"{len(models)} models: the same loss and accuracies, layer-wise in "
          f"{min(levels)} to {max(levels)} levels")


if __name__ == "__main__":
    main()
