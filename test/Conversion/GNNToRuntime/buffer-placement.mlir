// Buffer placement (convert-gnn-to-runtime buffer-budget, issue 18): at
// 1000 vertices the training step's buffers are 96128 bytes at once (its
// slots), and the gather alone needs 64000 (its input and output rows).
// RUN: echo '{"num_vertices": 1000, "num_edges": 20000, "num_features": 64, "num_classes": 4}' > %t.meta.json
//
// Everything fits: no copies, no drops; the slots stay allocated across calls.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=96128" 2>&1 | FileCheck %s --check-prefix=FITS
// FITS: remark: buffer placement: none (every slot fits: 96128 bytes (93.9 KiB))
// FITS-NOT:     call @gnnrtDropAll
// FITS-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// FITS-NOT:     call @gnnrtDropAll
// FITS-NOT:     call @gnnrtEvict
// FITS-NOT:     call @gnnrtFetch
// FITS:         return
//
// At 70000 bytes activations leave after the forward pass, written once,
// and are fetched before their readers; the memref taken again after a fetch
// is what the reader uses. Dead buffers are dropped without a write.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=70000" 2>&1 | FileCheck %s
// CHECK: remark: buffer placement: optimal; 70000 bytes for the buffers (minimum 64000), peak {{[0-9]+}}; {{[1-9][0-9]*}} fetches ({{[0-9]+}} bytes), {{[1-9][0-9]*}} evictions ({{[0-9]+}} bytes), {{[0-9]+}} drops
// CHECK: remark: buffer placement: none (every slot fits: 64000 bytes (62.5 KiB))
// CHECK-LABEL: func.func @gnn_eval(%arg0: !llvm.ptr)
// CHECK-NEXT:    call @gnnrtDropAll(%arg0)
// CHECK-NOT:     call @gnnrtEvict
// CHECK-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// CHECK-NEXT:    call @gnnrtDropAll(%arg0)
// CHECK:         call @gnnrtEvict(%arg0, %c{{[0-9]+}}_i64{{[_0-9]*}})
// CHECK:         call @gnnrtDrop(%arg0, %c{{[0-9]+}}_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}) : (!llvm.ptr, i64, i64) -> ()
// CHECK:         call @gnnrtFetch(%arg0, %c[[SLOT:[0-9]+]]_i64{{[_0-9]*}})
// CHECK-NEXT:    %[[R:c[0-9]+_i64[_0-9]*]] = arith.constant [[SLOT]] : i64
// CHECK-NEXT:    %[[NEW:.*]] = call @gnnrtBuffer(%arg0, %[[R]], %{{.*}})
// CHECK:         %[[NEW]]
// CHECK:         return

// The same placement by LRU, and by streaming (no caching: every read is a
// fetch, so more bytes).
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=70000 placement=lru" 2>&1 >/dev/null | FileCheck %s --check-prefix=LRU
// LRU: remark: buffer placement: lru; 70000 bytes for the buffers (minimum 64000), peak {{[0-9]+}}; {{[1-9][0-9]*}} fetches
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=70000 placement=streaming" 2>&1 >/dev/null | FileCheck %s --check-prefix=STREAMING
// STREAMING: remark: buffer placement: streaming; 70000 bytes for the buffers (minimum 64000), peak {{[0-9]+}}; {{[2-9]|[1-9][0-9]+}} fetches
//
// Below the gather's 64000 bytes no plan exists: the error names the op and
// the minimum.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=63999" -verify-diagnostics -o /dev/null
//
// Option errors.
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="buffer-budget=70000" 2>&1 | FileCheck %s --check-prefix=NOMETA
// NOMETA: error: convert-gnn-to-runtime: option buffer-budget needs the dataset's sizes (option meta)
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: convert-gnn-to-runtime: option buffer-budget must be 0 or more
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=70000 placement=fifo" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: convert-gnn-to-runtime: option placement must be optimal, lru, belady or streaming, not 'fifo'
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=70000 mem-budget=1000000" 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: convert-gnn-to-runtime: options buffer-budget and mem-budget exclude each other
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json mem-budget=1000" 2>&1 | FileCheck %s --check-prefix=STATE
// STATE: error: the memory budget of 1000 bytes is below what stays resident through the run, {{[0-9]+}} bytes (features 256000, graph and dataset arrays {{[0-9]+}}, parameters with gradients and Adam's moments 8704, the process 16777216), before any buffer of the training step
//
// The features out of core (features-out-of-core): a read-only buffer in a
// slot of its own (one past every function's), taken as row chunks from
// storage, whose chunks the plan fetches and drops with the copy kept; never
// written back.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=150000 row-chunks=4 features-out-of-core" 2>&1 | FileCheck %s --check-prefix=OOC
// OOC: remark: buffer placement: optimal; 150000 bytes for the buffers (minimum {{[0-9]+}}), peak {{[0-9]+}}; {{[1-9][0-9]*}} fetches
// OOC-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// OOC-NEXT:    call @gnnrtDropAll(%arg0)
// OOC:         %{{.*}} = call @gnnrtFeaturesChunks(%arg0, %c[[FS:[0-9]+]]_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}})
// OOC-NOT:     call @gnnrtEvictChunk(%arg0, %c[[FS]]_i64
// OOC:         call @gnnrtFetchChunk(%arg0, %c[[FS]]_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// OOC-NOT:     call @gnnrtEvictChunk(%arg0, %c[[FS]]_i64
// OOC:         call @gnnrtDropChunk(%arg0, %c[[FS]]_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}})
// OOC-NOT:     call @gnnrtEvictChunk(%arg0, %c[[FS]]_i64
// OOC-NOT:     call @gnnrtFeatures(
//
// When everything fits, features included, their chunks are read once and
// stay.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=352128 features-out-of-core" 2>&1 | FileCheck %s --check-prefix=OOC-FITS
// OOC-FITS: remark: buffer placement: none (every slot fits: 352128 bytes (343.9 KiB))
// OOC-FITS-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// OOC-FITS-NOT:     call @gnnrtDropAll
// OOC-FITS:         %{{.*}} = call @gnnrtFeaturesChunks(%arg0, %c[[FS:[0-9]+]]_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}})
// OOC-FITS-NEXT:    %{{.*}} = arith.constant
// OOC-FITS-NEXT:    %{{.*}} = arith.constant
// OOC-FITS-NEXT:    call @gnnrtFetchChunk(%arg0, %c[[FS]]_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// OOC-FITS-NOT:     call @gnnrtDropChunk
//
// Selective loading and the sub-chunk pipeline (NeuGraph): a tile's input
// chunk that the plan fetches for that tile alone and drops after it is
// fetched by the tile: a gnnrtSpmmRows tile becomes gnnrtSpmmRowsFetch
// (slot, chunk, then the tile's operands), which may read only the rows
// the tile's edges reach and reads them in sub-chunks as it computes;
// forward tiles to the destinations (side 1), backward to the sources
// (side 0). No gnnrtSpmmRows is left: streaming drops every input after
// its tile.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=40000 row-chunks=4 placement=streaming" 2>&1 | FileCheck %s --check-prefix=SELECTIVE
// SELECTIVE: remark: buffer placement: streaming; 40000 bytes for the buffers (minimum 36864), peak {{[0-9]+}}; {{[0-9]+}} fetches ({{[0-9]+}} bytes), {{[0-9]+}} evictions ({{[0-9]+}} bytes), {{[0-9]+}} drops; [[N:[1-9][0-9]*]] fetches for one tile (selective), {{[0-9]+}} of them expected filtered, [[N]] in sub-chunks
// SELECTIVE-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// SELECTIVE-NOT:     call @gnnrtSpmmRows(
// SELECTIVE:         call @gnnrtSpmmRowsFetch(%arg0, %c[[H:[0-9]+]]_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %{{[a-z_0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}}, %[[B1:[0-9]+]], %[[B1]], %{{[0-9]+}})
// SELECTIVE-NOT:     call @gnnrtSpmmRows(
// SELECTIVE:         call @gnnrtDropChunk(%arg0, %c[[H]]_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}})
// SELECTIVE-NOT:     call @gnnrtSpmmRows(
// SELECTIVE:         call @gnnrtSpmmRowsFetch(%arg0, %c{{[0-9]+}}_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}
// SELECTIVE-NOT:     call @gnnrtSpmmRows(
// SELECTIVE:         return
//
// A fused gather's kernel reads its tile's input through its arguments: its
// tile launch becomes gnnrtParallelForRangeFetch (slot, chunk, side, the
// kernel integers of the tile's input range, in order, then the launch's
// operands), which reads the chunk in sub-chunks and runs the kernel over
// each. The max gather keeps the first of equal values (its argmax for the
// backward pass), so its sub-chunks run in order (1); the sum gathers' in
// any order (0). A second input of the same tile (the backward kernel reads
// two chunks to the sources) joins it: gnnrtTileInput right before the
// call registers its slot, whose chunk the call reads in the same
// sub-chunks. Every fetch for one tile is then in sub-chunks.
// RUN: gnn-opt %S/fused-gather.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=62000 row-chunks=4 placement=streaming" 2>&1 | FileCheck %s --check-prefix=KERNEL-TILE
// KERNEL-TILE: remark: buffer placement: streaming; 62000 bytes for the buffers {{.*}}; [[T:[1-9][0-9]*]] fetches for one tile (selective), {{[0-9]+}} of them expected filtered, [[T]] in sub-chunks
// KERNEL-TILE-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// KERNEL-TILE-NOT: call @gnnrtParallelForRangeFetch(
// KERNEL-TILE: call @gnnrtKernelInt(%arg0, %c3_i64{{[_0-9]*}}, %{{[0-9]+}})
// KERNEL-TILE: call @gnnrtKernelInt(%arg0, %c4_i64{{[_0-9]*}}, %{{[0-9]+}})
// KERNEL-TILE: call @gnnrtParallelForRangeFetch(%arg0, %c{{[0-9]+}}_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %f, %c0_i64{{[_0-9]*}}, %{{[0-9]+}})
// KERNEL-TILE: call @gnnrtTileInput(%arg0, %c{{[0-9]+}}_i64{{[_0-9]*}})
// KERNEL-TILE-NOT: call
// KERNEL-TILE: call @gnnrtParallelForRangeFetch(%arg0, %c{{[0-9]+}}_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c{{[0-9]+}}_i64{{[_0-9]*}}, %c{{[0-9]+}}_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %f{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %{{[0-9]+}})
// KERNEL-TILE-NOT: call @gnnrtFetchChunkFor(
// KERNEL-TILE: return
//
// Beyond the DP's limits (16 row chunks of 100000 vertices keep 21 tensors
// live), the bounded search plans over the lowering's order: 63891968 bytes
// fetched per step at 3000000 bytes, where LRU fetches 113797632.
// RUN: echo '{"num_vertices": 100000, "num_edges": 2000000, "num_features": 64, "num_classes": 4}' > %t.big.json
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.big.json buffer-budget=3000000 row-chunks=16" 2>&1 >/dev/null | FileCheck %s --check-prefix=BOUNDED
// BOUNDED: remark: buffer placement: optimal-bounded (dp not run: a valid execution state of {{[0-9]+}} ops has 21 active tensors, over the limit of 20 (2^20 cache sets per state)); 3000000 bytes for the buffers (minimum 1703936), peak {{[0-9]+}}; {{[0-9]+}} fetches (63891968 bytes)
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.big.json buffer-budget=3000000 row-chunks=16 placement=lru" 2>&1 >/dev/null | FileCheck %s --check-prefix=BOUNDED-LRU
// BOUNDED-LRU: remark: buffer placement: lru; 3000000 bytes for the buffers (minimum 1703936), peak {{[0-9]+}}; {{[0-9]+}} fetches (113797632 bytes)
//
// Where every slot fits nothing moves, so no fetch is a tile's.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json buffer-budget=96128 row-chunks=4" 2>/dev/null | FileCheck %s --check-prefix=FITS-CHUNKS
// FITS-CHUNKS-NOT: call @gnnrtFetchChunkFor
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json features-out-of-core" 2>&1 | FileCheck %s --check-prefix=OOC-NOBUDGET
// OOC-NOBUDGET: error: convert-gnn-to-runtime: option features-out-of-core needs a budget (option mem-budget or buffer-budget)
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.meta.json mem-budget=1000 features-out-of-core" 2>&1 | FileCheck %s --check-prefix=OOC-STATE
// OOC-STATE: error: the memory budget of 1000 bytes is below what stays resident through the run, {{[0-9]+}} bytes (graph and dataset arrays {{[0-9]+}}, parameters with gradients and Adam's moments 8704, the process 16777216), before any buffer of the training step

module {
  // expected-error@+1 {{the memory budget leaves 63999 bytes (62.5 KiB) for the training state's buffers, below the minimum any plan needs, 64000 bytes (62.5 KiB): 'gnn.gather' alone uses 64000 bytes (62.5 KiB) of buffers at once (raise the budget)}}
  func.func @mlp(
      %w: tensor<?x8xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %w2: tensor<8x?xf32> {gnn.param = "w2", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x8xf32>) -> !gnn.vtensor<8xf32> {
    ^bb0(%r: tensor<?xf32>, %wt: tensor<?x8xf32>):
      %t0 = gnn.linear %r, %wt : (tensor<?xf32>, tensor<?x8xf32>) -> tensor<8xf32>
      %t1 = gnn.relu %t0 : tensor<8xf32>
      gnn.yield %t1 : tensor<8xf32>
    }
    %s = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
    // expected-note@+2 {{this op}}
    // expected-note@+1 {{its buffers at once: slot 0 32000 bytes (31.2 KiB), slot 1 32000 bytes (31.2 KiB)}}
    %a = gnn.gather sum %g, %s to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
    %logits = gnn.apply_vertex %g (%a) params(%w2) : (!gnn.vtensor<8xf32>) params(tensor<8x?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%r: tensor<8xf32>, %wt: tensor<8x?xf32>):
      %t0 = gnn.linear %r, %wt : (tensor<8xf32>, tensor<8x?xf32>) -> tensor<?xf32>
      gnn.yield %t0 : tensor<?xf32>
    }
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %train_mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %loss = gnn.softmax_cross_entropy %logits, %labels, %train_mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
