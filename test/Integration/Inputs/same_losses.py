"""Compares the per-epoch losses of two --json summaries within DESIGN.md's
rule (relative 1e-4, absolute 1e-5 per value).

    same_losses.py A.json B.json
"""

import json
import sys

a, b = (json.load(open(p))["history"] for p in sys.argv[1:3])
if len(a) != len(b):
    sys.exit(f"{len(a)} epochs against {len(b)}")
for x, y in zip(a, b):
    if abs(x["loss"] - y["loss"]) > 1e-5 + 1e-4 * abs(y["loss"]):
        sys.exit(f"epoch {x['epoch']}: loss {x['loss']} against {y['loss']}")
print(f"{len(a)} epochs, losses agree")
