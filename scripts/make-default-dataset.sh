#!/usr/bin/env bash
# Rebuilds the shipped default dataset, examples/datasets/polblogs, from the
# graph-tool collection that scripts/setup.sh unpacks into .cache/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gt=$root/.cache/graph-tool/collection/polblogs.gt.gz
[ -f "$gt" ] || { echo "error: $gt missing: run scripts/setup.sh first" >&2; exit 1; }
PYTHONPATH=$root/python "$root/.venv/bin/python" -m gnnc.data convert gt "$gt" \
  --label value --features pos --symmetrize --self-loops --standardize --seed 0 \
  --direction-types \
  --source "Adamic & Glance 2005 political blogs from Debian python3-graph-tool 2.45+ds-10; label = vertex property 'value' (political leaning), features = vertex property 'pos' (2-D layout); symmetrised, self-loops added; edge_type = 0 original direction, 1 reverse, 2 self-loop; made by scripts/make-default-dataset.sh" \
  -o "$root/examples/datasets/polblogs"
