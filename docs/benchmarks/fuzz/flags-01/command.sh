#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnn-compile: an option's value refused in LLVM's command-line form, without an error: line
$BUILD/bin/gnn-compile examples/models/gat.mlir -o $TMP/m.o -emit=obj -emit=
