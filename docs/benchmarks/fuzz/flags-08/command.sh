#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnn-compile: SIGABRT: LLVM ERROR: out of memory at mlir::gnn::readDatasetMeta
$BUILD/bin/gnn-compile examples/models/gcn.mlir -o $TMP/m.o -emit=obj --remarks --dataset=/dev/zero
