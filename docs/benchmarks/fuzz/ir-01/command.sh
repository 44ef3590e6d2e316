#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# executable: SIGSEGV: 
$BUILD/bin/gnn-compile model.mlir -o model && ./model --data test/datasets/good/tiny --epochs 2 --quiet --threads 1
