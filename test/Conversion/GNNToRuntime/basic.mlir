// RUN: gnn-opt %s -split-input-file --gnn-autodiff --convert-gnn-to-runtime | FileCheck %s
// RUN: gnn-opt %s -split-input-file --gnn-autodiff --gnn-to-llvm-pipeline | FileCheck %s --check-prefix=LLVM

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
// A gather mean of a scatter is one SpMM (mean flag set), no edge tensor.
// CHECK-NOT:     call @gnnrtScatter
// CHECK:         call @gnnrtSpmm(%{{.*}}, %c1_i64{{.*}}, %c1_i64
// CHECK:         call @gnnrtGemm
// CHECK:         call @gnnrtSoftmaxCrossEntropy
// CHECK:         call @gnnrtGemm
// CHECK-NOT:     call @gnnrtGemm
// CHECK:         call @gnnrtGrad
// CHECK-NOT:     call @gnnrtOptimizerUpdate
// CHECK:         call @gnnrtSumGradients
// CHECK:         call @gnnrtOptimizerUpdate
// CHECK:         call @gnnrtSetOutput
// The description lists each slot's buffer sizes as formulas of |V|, F and
// C (the driver sizes the training state from them before allocating),
// then the evaluation's alone: the aggregation's and the logits' (not the
// gradients').
// CHECK:         llvm.mlir.global external constant @gnnrt_model_info("model layer\0Aparam w glorot 0 2 -1 -2\0Afeatures -1\0Aclasses -1\0Abuffer 0 1 F*V\0Abuffer 1 1 C*V\0Abuffer 2 1 C*V\0Abuffer 3 1 C*F\0Aeval-buffer 0 1 F*V\0Aeval-buffer 1 1 C*V\0Agraph-arrays 1\0Ahops 1\0A\00")

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

// -----

// The weighted aggregation of GCN (scatter, multiply by a per-edge scalar,
// gather sum) is one SpMM with the weights, forward and backward; an edge
// body that is not a plain scaling keeps its edge tensor.

// CHECK-LABEL: func.func @gnn_eval
// CHECK:         call @gnnrtSpmm(%{{.*}}, %c1_i64{{.*}}, %c0_i64{{.*}}, %[[W:.*]], %
// CHECK:         call @gnnrtScatter
// CHECK:         call @gnnrtGather
// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         call @gnnrtSpmm
// CHECK:         call @gnnrtScatter
// CHECK:         call @gnnrtGather
func.func @weighted(%w: tensor<4x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %c = gnn.input %g "weight" : !gnn.etensor<1xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%s, %c) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%r: tensor<4xf32>, %n: tensor<1xf32>):
    %t = gnn.mul %r, %n : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %s2 = gnn.scatter %g, %a from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m2 = gnn.apply_edge %g (%s2) : (!gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%r: tensor<4xf32>):
    %t = gnn.relu %r : tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %a2 = gnn.gather sum %g, %m2 to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%a2) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<4x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<4xf32>, %wv: tensor<4x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<4xf32>, tensor<4x?xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}

// -----

// A bias's gradient (a sum over all vertices) is one runtime column sum over
// the rows, not a compiled loop walking each column down the rows. The loss
// and its gradient come from one call over the logits.

// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         call @gnnrtSoftmaxCrossEntropy(%{{.*}}, %{{.*}}, %[[GRAD:.*]], %{{.*}}, %{{.*}})
// CHECK-NOT:     call @gnnrtSoftmaxCrossEntropy
// CHECK:         call @gnnrtSumRows(%arg0, %{{.*}}, %{{.*}}, %[[GRAD]], %{{.*}})
// CHECK:         call @gnnrtOptimizerUpdate
func.func @bias(%b: tensor<4xf32> {gnn.param = "b", gnn.init = #gnn.init<zeros>})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%x) params(%b) : (!gnn.vtensor<4xf32>) params(tensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<4xf32>, %bv: tensor<4xf32>):
    %t = gnn.add %v, %bv : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<4xf32>
}
