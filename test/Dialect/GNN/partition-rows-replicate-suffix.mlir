// RUN: gnn-opt %s --gnn-partition-rows=replicate-from=1 2>/dev/null | FileCheck %s --check-prefix=FROM
// RUN: gnn-opt %s --gnn-partition-rows=replicate-from=1 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK-FROM
// RUN: gnn-opt %s --gnn-partition-rows=replicate-from=1 --gnn-autodiff 2>/dev/null | FileCheck %s --check-prefix=GRAD-FROM

// replicate-from=1: a replicated suffix. Level 0 (the features' linear)
// runs on the own rows; the whole graph's ops read its rows through one
// all-gather (recomputing the degrees), and the loss reads the logits'
// own rows.
// FROM-LABEL: func.func @suffix
// FROM:         %[[G:.*]] = gnn.graph :
// FROM-NEXT:    %[[W:.*]] = gnn.graph whole
// FROM:         %[[X:.*]] = gnn.input %[[G]] "features"
// FROM:         %[[XW:.*]] = gnn.apply_vertex %[[G]](%[[X]]
// FROM-NEXT:    ^bb0
// FROM:         %[[XA:.*]] = gnn.all_gather %[[G]], %[[XW]] : !gnn.vtensor<4xf32>
// FROM:         gnn.scatter %[[W]], %[[XA]] from src
// FROM:         gnn.gather sum %[[W]]
// FROM:         %[[O:.*]] = gnn.apply_vertex %[[W]]
// FROM:         %[[OO:.*]] = gnn.own_rows %[[G]], %[[O]]
// FROM:         gnn.softmax_cross_entropy %[[OO]]
// REMARK-FROM: remark: row partitioning: 3 op(s) of the levels from 1 on replicated on the whole graph (1 own-rows read(s)); 1 all-gather(s) in the forward (rows of tensor<4xf32>), 0 reduce-scatter(s)

// The backward: the suffix's gradients are partials on the whole graph
// (the loss's own rows padded), and the all-gather's adjoint sums them
// into the owners' rows.
// GRAD-FROM-LABEL: func.func @gnn_train_step
// GRAD-FROM:         gnn.pad_rows
// GRAD-FROM:         gnn.reduce_scatter
// GRAD-FROM:         gnn.optimizer_update
func.func @suffix(%w: tensor<8x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<8xf32>
  %deg = gnn.degree %g in : !gnn.vtensor<1xf32>
  %xw = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<8xf32>, %wv: tensor<8x4xf32>):
    %t = gnn.linear %v, %wv : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %s1 = gnn.scatter %g, %xw from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a1 = gnn.gather sum %g, %s1 to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%a1, %deg) : (!gnn.vtensor<4xf32>, !gnn.vtensor<1xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%p: tensor<4xf32>, %d: tensor<1xf32>):
    %t = gnn.mul %p, %d : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<4xf32>
}

// A deep model's replicated suffix (deep_gcn: 16 hops, 15 of them on the
// whole graph) verifies in linear time: the vertex spaces of a chain of
// whole-graph stages are computed once each (they were recomputed
// exponentially often).
// RUN: timeout 60 gnn-opt %examples/models/deep_gcn.mlir --gnn-train-pipeline="partition=rows replicate-from=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEEP --allow-empty
// DEEP-NOT: error
