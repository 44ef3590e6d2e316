#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnn-compile: LLVM ERROR: IO failure on output stream: Invalid argument
$BUILD/bin/gnn-compile examples/models/gcn.mlir -o $TMP/m.o -emit=obj -o=/proc/self/status
