#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then compiles and runs a
# model from the install tree only (gnn-compile finds gnnrt next to itself;
# the executable finds the shipped dataset under share/gnnc).
# Usage: install-smoke-test.sh BUILD_DIR MODEL.mlir
set -euo pipefail
build=$1
model=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cd "$prefix"
"$prefix/bin/gnn-compile" "$model" -o "$prefix/bin/model"
test -f "$prefix/share/gnnc/datasets/polblogs/meta.json"
"$prefix/bin/model" --epochs 3 | grep "on polblogs"
echo "install smoke test passed: $prefix"
