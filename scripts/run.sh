#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the main job: compiles the
# GCN model of the zoo (examples/models/gcn.mlir) into a native executable and
# trains it on the shipped dataset (examples/datasets/polblogs). Extra
# arguments go to the executable (e.g. --epochs 50 --threads 2; --help).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
build=${GNN_BUILD_DIR:-$root/build}
mkdir -p "$build/models"
data="$root/examples/datasets/polblogs"
echo "[run] gnn-compile examples/models/gcn.mlir --dataset examples/datasets/polblogs -o $build/models/gcn"
"$build/bin/gnn-compile" "$root/examples/models/gcn.mlir" --dataset "$data" \
  -o "$build/models/gcn"
echo "[run] training on examples/datasets/polblogs"
"$build/models/gcn" --data "$data" --epochs 200 \
  --lr 0.01 --weight-decay 5e-4 --eval-every 10 "$@"
