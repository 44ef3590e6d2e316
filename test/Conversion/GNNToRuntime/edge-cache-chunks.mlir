// A fused gather's edge caches in row chunks (issue 18): per-edge values
// indexed by edge id, read and written by a to-dst kernel at its chunk's
// in-edges and by a to-src kernel's tile i at destination chunk i's, so the
// placement moves them by destination chunk (gnnrtBufferEdgeChunks: chunk c
// is the edges [indptr[b_c], indptr[b_{c+1}])) instead of whole. Without
// the dataset's indptr.npy (a bare meta file), a chunk counts twice an even
// share of the edges: 2 * 20000 / 4 edges of 4 floats, 160000 bytes (its
// pages: 167936).
// RUN: echo '{"num_vertices": 1000, "num_edges": 20000, "num_features": 64, "num_classes": 4}' > %t.meta.json
//
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=800000 row-chunks=4" 2>&1 | FileCheck %s
// CHECK: remark: keeps its per-edge gnn.row_dot 'tensor<4xf32>' (4 floats per edge) for later kernels
// CHECK: remark: buffer placement: {{.*}}; 800000 bytes for the buffers (minimum 700416)
// CHECK-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// CHECK:         call @gnnrtBufferEdgeChunks(%arg0, %c{{[0-9]+}}_i64{{[_0-9]*}}, %{{[0-9]+}}, %c4_i64{{[_0-9]*}})
// CHECK:         call @gnnrtFetchChunk(
//
// The least plan holds one chunk of each cache, not the whole |E| x 4
// floats (before: 'slot 0 (whole) 320000 bytes').
// RUN: not gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=1 row-chunks=4" 2>&1 | FileCheck %s --check-prefix=LEAST
// LEAST: error: the memory budget leaves 1 bytes for the training state's buffers, below the minimum any plan needs, 700416 bytes (684.0 KiB): 'gnn.fused_gather' alone uses 700416 bytes (684.0 KiB) of buffers at once (raise the budget)
// LEAST: note: its buffers at once: slot 0 chunk 3 167936 bytes (164.0 KiB), slot 1 chunk 3 167936 bytes (164.0 KiB), slot 2 chunk 3 167936 bytes (164.0 KiB)
//
// Without row chunks (and no budget) the caches are plain slot buffers.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="meta=%t.meta.json" 2>&1 | FileCheck %s --check-prefix=WHOLE
// WHOLE: remark: keeps its per-edge gnn.row_dot
// WHOLE-NOT: call @gnnrtBufferEdgeChunks(
