"""Runs --gnn-place-tensors over a sweep of budgets and checks, for every
budget the DP solves, DP <= LRU <= streaming bytes loaded (ROC §5's
comparison), and that the DP's bytes are non-increasing in the budget.

    placement_sweep.py GNN_OPT MODEL META
"""

import re
import subprocess
import sys

gnn_opt, model, meta = sys.argv[1:4]
pattern = re.compile(r"remark: tensor placement at (\d+) bytes .*?: DP (\d+) loaded, .*?; "
                     r"LRU (\d+) loaded, .*?; streaming (\d+) loaded")
rows = []
for gib8 in range(64, 0, -1):  # 8 GiB down to 1/8 GiB
    budget = gib8 << 27
    r = subprocess.run([gnn_opt, model, f"--gnn-train-pipeline=meta={meta}",
                        f"--gnn-place-tensors=budget={budget} meta={meta}", "-o", "/dev/null"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        if "is below the" not in r.stderr:
            sys.exit(f"budget {budget}: {r.stderr.strip()}")
        break
    m = pattern.search(r.stderr)
    if not m:
        continue  # the DP was not run at this budget
    dp, lru, stream = (int(m.group(i)) for i in (2, 3, 4))
    if not dp <= lru <= stream:
        sys.exit(f"budget {budget}: DP {dp}, LRU {lru}, streaming {stream}")
    if rows and dp < rows[-1][1]:
        sys.exit(f"budget {budget}: DP {dp} below {rows[-1][1]} at a larger budget")
    rows.append((budget, dp, lru, stream))
if not rows:
    sys.exit("the DP solved no budget")
best = max(lru / dp for _, dp, lru, _ in rows)
print(f"{len(rows)} budgets: DP <= LRU <= streaming, DP non-increasing in the budget; "
      f"LRU/DP up to {best:.2f}")
