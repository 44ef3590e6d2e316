#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnn-compile: LLVM ERROR: IO failure on output stream: Illegal seek
$BUILD/bin/gnn-compile examples/models/gat.mlir -o $TMP/m.o -emit=obj -o=-
