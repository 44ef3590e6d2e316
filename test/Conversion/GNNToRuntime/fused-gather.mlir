// RUN: gnn-opt %s --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime | FileCheck %s
// RUN: gnn-opt %s --gnn-autodiff --gnn-fuse-sag --gnn-to-llvm-pipeline | FileCheck %s --check-prefix=LLVM

// A fused_gather whose body is not a plain (scaled) copy of the neighbour's
// row becomes a compiled kernel: a private function over a range of
// vertices (their edges from the graph's offsets, the row elements inside),
// run by gnnrtParallelFor, its operands passed through the context. No
// scatter, no gather and no edge-sized buffer remain. The max gather's
// kernel also records the chosen edges, for the backward's edge_select.

// CHECK-LABEL: func.func @gnn_train_step(%{{.*}}: !llvm.ptr) -> f32
// CHECK-NOT:     call @gnnrtScatter
// CHECK-NOT:     call @gnnrtGather(
// CHECK:         call @gnnrtKernelArg(
// CHECK:         call @gnnrtKernelArgI32(
// CHECK:         %[[K:.*]] = constant @__gnn_kernel_{{[0-9]+}} : (!llvm.ptr, i64, i64) -> ()
// CHECK:         call @gnnrtParallelFor(%{{.*}}, %[[K]], %{{.*}}) : (!llvm.ptr, (!llvm.ptr, i64, i64) -> (), i64) -> ()
// CHECK-NOT:     call @gnnrtScatter
// CHECK-NOT:     call @gnnrtGatherArgBackward
// CHECK:         call @gnnrtSetOutput

// The kernel: offsets of the gather's side, the other end of each edge,
// the loop over the vertex's edges, the element loop with the body and the
// strict max (ties keep the earlier edge) that also stores the edge id.
// The prefetch distance: about 256 cache lines in flight, at most 8 lines
// of each neighbour row, 16 to 64 rows ahead (the runtime SpMM's rule).
// CHECK-LABEL: func.func private @__gnn_kernel_
// CHECK:         call @gnnrtKernelArgGet
// CHECK:         call @gnnrtGraphOffsets
// CHECK:         call @gnnrtGraphIndex
// CHECK:         %[[LINE:.*]] = arith.constant 16 : index
// CHECK:         %[[SPAN:.*]] = arith.constant 128 : index
// CHECK:         %[[ROWLINES:.*]] = arith.ceildivui %[[WIDTH:.*]], %[[LINE]]
// CHECK:         arith.minui %[[ROWLINES]], %{{.*}}
// CHECK:         %[[C256:.*]] = arith.constant 256 : index
// CHECK:         %[[AHEAD:.*]] = arith.divui %[[C256]],
// CHECK:         %[[C16:.*]] = arith.constant 16 : index
// CHECK:         %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[CAPPED:.*]] = arith.minui %[[AHEAD]], %[[C64]]
// CHECK:         %[[DIST:.*]] = arith.maxui %[[CAPPED]], %[[C16]]
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             arith.addi %{{.*}}, %[[DIST]] : index
// CHECK:             memref.prefetch
// CHECK:             scf.for
// CHECK:               math.exp
// CHECK:               arith.cmpf ogt
// CHECK:               arith.select
// CHECK:               memref.store

// A gather to the source (the backward's gradient of the source row) runs
// over the CSR: the destinations in CSR order (array 3) are read at the
// position, in order; the edge ids (array 2) only where the body needs the
// edge (here the edge_select of the max gather's chosen edge).
// CHECK-LABEL: func.func private @__gnn_kernel_2
// CHECK:         call @gnnrtGraphOffsets(%{{.*}}, %[[C0:.*]]) :
// CHECK:         %[[C3:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[OTHER:.*]] = call @gnnrtGraphIndex(%{{.*}}, %[[C3]])
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[EDGE:.*]] = call @gnnrtGraphIndex(%{{.*}}, %[[C2]])
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             memref.store
// CHECK:           scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        memref.load %[[EDGE]][%[[P]]]
// CHECK:             memref.load %[[OTHER]][%[[P]]]
// CHECK:             scf.if
// CHECK:               memref.load %[[OTHER]][%{{.*}}]
// CHECK-NOT:           memref.load %[[EDGE]]
// CHECK:               memref.prefetch
// CHECK:             arith.cmpi eq

// LLVM-LABEL: llvm.func @gnn_train_step
// LLVM:         llvm.mlir.addressof @__gnn_kernel_
// LLVM:         llvm.call @gnnrtParallelFor
func.func @m(%w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %r = gnn.scatter %g, %h from dst : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %m = gnn.apply_edge %g (%s, %r) : (!gnn.etensor<?xf32>, !gnn.etensor<?xf32>) -> !gnn.etensor<?xf32> {
  ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
    %t0 = gnn.sub %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    %t1 = gnn.exp %t0 : tensor<?xf32>
    gnn.yield %t1 : tensor<?xf32>
  }
  %o = gnn.gather max %g, %m to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}
