#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the main job.
#
# PLACEHOLDER until gnn-compile produces executables: it runs the gnn
# optimisation pipeline over the GCN model of the zoo and prints the IR.
# Once the lowering lands this becomes "compile GCN and train it on the
# shipped dataset".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
"${GNN_BUILD_DIR:-$root/build}/bin/gnn-compile" "$root/examples/models/gcn.mlir" -emit=mlir "$@"
