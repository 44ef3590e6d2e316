#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnn-opt: SIGABRT: LLVM ERROR: out of memory at mlir::gnn::readDatasetMeta
$BUILD/bin/gnn-opt examples/models/gcn.mlir --gnn-train-pipeline=meta=/dev/full -o /dev/null
