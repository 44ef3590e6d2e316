#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the whole test suite: the lit
# suite (FileCheck tests, Python tests) and the GoogleTest binaries, as one
# ctest run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "${GNN_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j2
