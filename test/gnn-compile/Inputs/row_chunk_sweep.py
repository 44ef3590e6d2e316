"""Compiles a model under a sweep of buffer budgets, halving by sqrt(2) down
to the first one refused, and checks that the row-chunk count K gnn-compile
chooses (the fewest of 1, 2, 4, ..., 64 whose placement fits: its remark,
none where K = 1) never decreases as the budget shrinks, that the sweep
reaches at least three counts, and that the refusal names the minimum.

    row_chunk_sweep.py GNN_COMPILE MODEL DATASET START
"""

import re
import subprocess
import sys

gnn_compile, model, dataset, start = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
remark = re.compile(r"remark: (\d+) row chunks: the fewest whose placement fits")

budget, previous, seen = float(start), 1, []
while budget >= 1024:
    b = int(budget)
    r = subprocess.run([gnn_compile, model, "--dataset", dataset, "--buffer-budget", str(b),
                        "--remarks", "-emit=mlir-llvm", "-o", "/dev/null"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        if "below the minimum any plan needs" not in r.stderr:
            sys.exit(f"budget {b}: refused without naming the minimum:\n{r.stderr[-2000:]}")
        break
    found = remark.findall(r.stderr)
    k = int(found[0]) if found else 1
    if k < previous:
        sys.exit(f"K decreased from {previous} to {k} at budget {b}")
    previous = k
    seen.append((b, k))
    budget /= 2 ** 0.5
else:
    sys.exit("no budget was refused")
counts = sorted({k for _, k in seen})
if len(counts) < 3:
    sys.exit(f"only row-chunk counts {counts} over {len(seen)} budgets")
print(f"K non-decreasing over {len(seen)} budgets: {' '.join(map(str, counts))}; "
      f"refused below {seen[-1][0]}, naming the minimum")
