// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime | FileCheck %s
// RUN: gnn-opt %s --gnn-autodiff --gnn-to-llvm-pipeline | FileCheck %s --check-prefix=LLVM

// A linear over all vertices is one GEMM over the whole vertex tensor (no
// per-row loop of mat-vecs): in @gnn_eval one; in the training step the
// forward one and the weight gradient's (an outer_sum): the backward stage
// does not need the linear's output, so nothing is recomputed, and the
// features need no gradient, so there is no input-gradient GEMM.

// CHECK-LABEL: func.func @gnn_eval(%{{.*}}: !llvm.ptr) -> f32
// CHECK-COUNT-1: call @gnnrtGemm
// CHECK-NOT:     call @gnnrtGemm
// CHECK-LABEL: func.func @gnn_train_step(%{{.*}}: !llvm.ptr) -> f32
// CHECK:         call @gnnrtDim
// CHECK:         call @gnnrtParam
// CHECK:         call @gnnrtFeatures
// CHECK:         call @gnnrtScatter
// CHECK:         call @gnnrtGather
// CHECK:         call @gnnrtGemm
// CHECK:         call @gnnrtSoftmaxCrossEntropy
// CHECK:         call @gnnrtGemm
// CHECK-NOT:     call @gnnrtGemm
// CHECK:         call @gnnrtGrad
// CHECK:         call @gnnrtOptimizerUpdate
// CHECK:         call @gnnrtSetOutput
// CHECK:         llvm.mlir.global external constant @gnnrt_model_info("model layer\0Aparam w glorot 0 2 -1 -2\0Afeatures -1\0Aclasses -1\0A\00")

// LLVM-LABEL: llvm.func @gnn_train_step(%{{.*}}: !llvm.ptr) -> f32
// LLVM-NOT:     gnn.
// LLVM:         llvm.call @gnnrtGemm
func.func @layer(%w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %a = gnn.gather mean %g, %s to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%a) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}
