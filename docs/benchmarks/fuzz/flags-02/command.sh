#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnn-opt: an option's value refused in LLVM's command-line form, without an error: line
$BUILD/bin/gnn-opt examples/models/gat.mlir --gnn-to-llvm-pipeline=fuse= -o /dev/null
