#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnn-opt: heap corruption (SIGABRT "malloc(): unaligned tcache chunk
# detected" or "malloc_consolidate(): unaligned fastbin chunk detected") in
# mlir::parseAsmSourceFile's clean-up after a parse error, where values used
# at the top level were forward references defined inside a nested region
# (%acc, %weight_1, %p). Layout-dependent: some builds exit 1 with the
# parse error only. MLIR 19's parser (llvm/llvm-project#107121 is the same
# class: a forward reference resolved to a value defined within).
$BUILD/bin/gnn-opt docs/benchmarks/fuzz/session35-parser/model.mlir -o /dev/null
