// RUN: gnn-opt %S/fused-gather.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="row-chunks=2 graph-out-of-core=1" 2>/dev/null | FileCheck %s
// RUN: gnn-opt %S/fused-gather.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="row-chunks=2" 2>/dev/null | FileCheck %s --check-prefix=IN-MEMORY
// RUN: gnn-compile %examples/models/gcn.mlir --emit=mlir -o %t.gcn.mlir
// RUN: gnn-opt %t.gcn.mlir --convert-gnn-to-runtime="row-chunks=2 graph-out-of-core=1" 2>/dev/null | FileCheck %s --check-prefix=SPMM

// The graph out of core (issue 18; docs/MemoryBudget.md, "The graph out of
// core"): in each row chunk of a step that reads edges, before its tiles,
// gnnrtGraphWindow(side, b_k, b_{k+1}) reads the per-edge arrays of the
// chunk's rows (side 1: the in-edges of destination rows, 0: the out-edges
// of source rows); the kernels and gnnrtSpmmRows then read those only. The
// model description says so, with the row chunk count.

// A fused gather's kernel (model @m of fused-gather.mlir, a max gather to
// the destinations): chunk 0's window, its two tiles; chunk 1's window.
// CHECK-LABEL: func.func @gnn_eval(%arg0: !llvm.ptr) -> f32
// CHECK:         %[[K:.*]] = constant @__gnn_kernel_{{[0-9]+}}
// CHECK:         call @gnnrtGraphWindow(%arg0, %[[DST:c1_i64[_0-9]*]], %[[B0:c0_i64[_0-9]*]], %[[B1:[0-9]+]])
// CHECK-NOT:     call @gnnrtGraphWindow(
// CHECK:         call @gnnrtParallelForRange(%arg0, %[[K]], %[[B0]], %[[B1]])
// CHECK-NOT:     call @gnnrtGraphWindow(
// CHECK:         call @gnnrtParallelForRange(%arg0, %[[K]], %[[B0]], %[[B1]])
// CHECK:         call @gnnrtGraphWindow(%arg0, %{{c1_i64[_0-9]*}}, %[[B1]], %[[V:[0-9]+]])
// CHECK:         call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B1]], %[[V]])
// CHECK:         call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B1]], %[[V]])
// CHECK-NOT:     call @gnnrtGraphWindow(
// CHECK:         call @gnnrtSetOutput
// The training step's gather to the sources opens source-side windows.
// CHECK-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr) -> f32
// CHECK:         call @gnnrtGraphWindow(%arg0, %{{c0_i64[_0-9]*}}, %{{c0_i64[_0-9]*}}, %{{[0-9]+}})
// CHECK:         llvm.mlir.global external constant @gnnrt_model_info({{.*}}graph-out-of-core 2\0A

// In memory: no window, no record.
// IN-MEMORY-NOT: gnnrtGraphWindow
// IN-MEMORY-NOT: graph-out-of-core

// GCN's aggregations (gnnrtSpmm in tiles of gnnrtSpmmRows): a window per
// chunk before its two tiles, on the destination side forward and the
// source side backward.
// SPMM-LABEL: func.func @gnn_eval(%arg0: !llvm.ptr) -> f32
// SPMM:         call @gnnrtGraphWindow(%arg0, %[[DST:c1_i64[_0-9]*]], %[[B0:c0_i64[_0-9]*]], %[[B1:[0-9]+]])
// SPMM-NEXT:    call @gnnrtSpmmRows(%arg0, %[[DST]], %{{.*}}, %[[B0]], %[[B1]], %[[B0]], %[[B1]])
// SPMM-NEXT:    call @gnnrtSpmmRows(%arg0, %[[DST]], %{{.*}}, %[[B0]], %[[B1]], %[[B1]], %[[V:[0-9]+]])
// SPMM:         call @gnnrtGraphWindow(%arg0, %[[DST2:c1_i64[_0-9]*]], %[[B1]], %[[V]])
// SPMM-NEXT:    call @gnnrtSpmmRows(%arg0, %[[DST2]], %{{.*}}, %[[B1]], %[[V]], %[[B0]], %[[B1]])
// SPMM-NEXT:    call @gnnrtSpmmRows(%arg0, %[[DST2]], %{{.*}}, %[[B1]], %[[V]], %[[B1]], %[[V]])
// SPMM-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr) -> f32
// SPMM:         call @gnnrtGraphWindow(%arg0, %[[SRC:c0_i64[_0-9]*]], %[[S0:c0_i64[_0-9]*]], %[[S1:[0-9]+]])
// SPMM-NEXT:    call @gnnrtSpmmRows(%arg0, %[[SRC]], %{{.*}}, %[[S0]], %[[S1]], %[[S0]], %[[S1]])
// SPMM-NOT:     call @gnnrtSpmm(
// SPMM:         graph-arrays 9\0Ahops 2\0Agraph-out-of-core 2\0A
