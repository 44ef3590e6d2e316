// A fused gather's edge caches in row chunks (issue 18): per-edge values
// indexed by edge id, read and written by a to-dst kernel at its chunk's
// in-edges and by a to-src kernel's tile i at destination chunk i's, so the
// placement moves them by destination chunk (gnnrtBufferEdgeChunks: chunk c
// is the edges [indptr[b_c], indptr[b_{c+1}])) instead of whole, each chunk
// sized from the dataset's indptr.npy.
// RUN: rm -rf %t && %PYTHON -m gnnc.data generate rmat --vertices 1000 --draws 10000 --features 64 --classes 4 --seed 1 -o %t > /dev/null
//
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="meta=%t/meta.json buffer-budget=500000 row-chunks=4" 2>&1 | FileCheck %s
// CHECK: remark: keeps its per-edge gnn.row_dot 'tensor<4xf32>' (4 floats per edge) for later kernels
// CHECK: remark: buffer placement: {{.*}}; 500000 bytes for the buffers (minimum 442368)
// CHECK-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// CHECK:         call @gnnrtBufferEdgeChunks(%arg0, %c{{[0-9]+}}_i64{{[_0-9]*}}, %{{[0-9]+}}, %c4_i64{{[_0-9]*}})
// CHECK:         call @gnnrtFetchChunk(
//
// The least plan holds one chunk of each cache: destination chunk 3's 4729
// in-edges of 4 floats (75664 bytes, 20 pages), not the whole |E| x 4.
// RUN: not gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="meta=%t/meta.json buffer-budget=1 row-chunks=4" 2>&1 | FileCheck %s --check-prefix=LEAST
// LEAST: error: the memory budget leaves 1 bytes for the training state's buffers, below the minimum any plan needs, 442368 bytes (432.0 KiB): 'gnn.fused_gather' alone uses 442368 bytes (432.0 KiB) of buffers at once (raise the budget)
// LEAST: note: its buffers at once: slot 1 edge chunk 3 81920 bytes (80.0 KiB), slot 2 edge chunk 3 81920 bytes (80.0 KiB), slot 3 edge chunk 3 81920 bytes (80.0 KiB), slot 4 chunks 2 of 4 77824 bytes (76.0 KiB)
//
// With only a meta file (no indptr.npy beside it) a chunk may hold every
// edge, so each counts |E| = 20000 edges (320000 bytes).
// RUN: echo '{"num_vertices": 1000, "num_edges": 20000, "num_features": 64, "num_classes": 4}' > %t.meta.json
// RUN: not gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=1 row-chunks=4" 2>&1 | FileCheck %s --check-prefix=BARE
// BARE: below the minimum any plan needs, 1179648 bytes (1.1 MiB)
// BARE: note: its buffers at once: slot 0 edge chunk 3 327680 bytes (320.0 KiB)
//
// Without row chunks (and no budget) the caches are plain slot buffers.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="meta=%t/meta.json" 2>&1 | FileCheck %s --check-prefix=WHOLE
// WHOLE: remark: keeps its per-edge gnn.row_dot
// WHOLE-NOT: call @gnnrtBufferEdgeChunks(
