#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnn-compile: LLVM ERROR: IO failure on output stream: No space left on device
$BUILD/bin/gnn-compile examples/models/ggnn.mlir -o $TMP/m.o -emit=obj -o= -o=/dev/full
