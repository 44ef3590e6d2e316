// RUN: gnn-opt %s -split-input-file --gnn-autodiff | FileCheck %s

// What the row ops' gradient rules emit, one family per case. The backward
// stage recomputes what the rules need and nothing else.

// Element-wise unary ops: sigmoid y(1-y), tanh 1-y^2, exp y, log 1/x,
// elu and leaky_relu through step(x).
// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         gnn.softmax_cross_entropy_grad
// CHECK:         gnn.apply_vertex
// CHECK-DAG:       %[[ONE:.*]] = gnn.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG:       gnn.sub %[[ONE]], %{{.*}} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-DAG:       gnn.div %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-DAG:       gnn.step
// CHECK-DAG:       gnn.constant dense<2.000000e-01> : tensor<f32>
// CHECK-DAG:       gnn.linear_transpose
// CHECK:         gnn.outer_sum
func.func @unary(%w: tensor<?x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
                 %o: tensor<4x?xf32> {gnn.param = "o", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w, %o) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>, tensor<4x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x4xf32>, %ov: tensor<4x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    %a = gnn.sigmoid %t : tensor<4xf32>
    %b = gnn.tanh %a : tensor<4xf32>
    %e = gnn.exp %b : tensor<4xf32>
    %l = gnn.log %e : tensor<4xf32>
    %u = gnn.elu %l : tensor<4xf32>
    %k = gnn.leaky_relu %u {alpha = 0.2 : f64} : tensor<4xf32>
    %y = gnn.linear %k, %ov : (tensor<4xf32>, tensor<4x?xf32>) -> tensor<?xf32>
    gnn.yield %y : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %h, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<?xf32>
}

// -----

// A learnable scalar broadcast by mul gets its per-row gradient summed over
// the row (reduce_sum), then over the rows (sum_rows); a concat's operands get
// slices of the gradient; a residual add sends the gradient to both paths.
// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         %[[BW:.*]]:{{[0-9]+}} = gnn.apply_vertex
// CHECK-DAG:       gnn.slice %{{.*}} {offset = 0 : i64} : tensor<8xf32> -> tensor<4xf32>
// CHECK-DAG:       gnn.slice %{{.*}} {offset = 4 : i64} : tensor<8xf32> -> tensor<4xf32>
// CHECK-DAG:       gnn.reduce_sum %{{.*}} : tensor<4xf32> -> tensor<f32>
// CHECK:         gnn.sum_rows %{{.*}} : !gnn.vtensor<f32> -> tensor<f32>
// CHECK:         gnn.optimizer_update "eps"
func.func @scalar_concat(%w: tensor<?x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
                         %eps: tensor<f32> {gnn.param = "eps", gnn.init = #gnn.init<zeros>},
                         %o: tensor<8x?xf32> {gnn.param = "o", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w, %eps, %o) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>, tensor<f32>, tensor<8x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x4xf32>, %ev: tensor<f32>, %ov: tensor<8x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    %s = gnn.mul %t, %ev : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %r = gnn.add %s, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %c = gnn.concat %r, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
    %y = gnn.linear %c, %ov : (tensor<8xf32>, tensor<8x?xf32>) -> tensor<?xf32>
    gnn.yield %y : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %h, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<?xf32>
}

// -----

// Per-head attention pieces: row_dot's gradient spreads over the head's
// features (broadcast_heads); broadcast_heads' gradient sums them back
// (row_dot with ones); the dropout reuses its mask (same mask_id).
// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         gnn.dropout %{{.*}} {mask_id = 0 : i64
// CHECK:         gnn.apply_vertex
// CHECK-DAG:       gnn.broadcast_heads %{{.*}} : tensor<2xf32> -> tensor<2x3xf32>
// CHECK-DAG:       gnn.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-DAG:       gnn.row_dot %{{.*}}, %{{.*}} : tensor<2x3xf32> -> tensor<2xf32>
// CHECK-DAG:       gnn.dropout %{{.*}} {mask_id = 0 : i64
func.func @heads(%w: tensor<?x2x3xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "", ""]},
                 %a: tensor<2x3xf32> {gnn.param = "a", gnn.init = #gnn.init<glorot>},
                 %o: tensor<2x3x?xf32> {gnn.param = "o", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w, %a, %o) : (!gnn.vtensor<?xf32>) params(tensor<?x2x3xf32>, tensor<2x3xf32>, tensor<2x3x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x2x3xf32>, %av: tensor<2x3xf32>, %ov: tensor<2x3x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x2x3xf32>) -> tensor<2x3xf32>
    %d = gnn.row_dot %t, %av : tensor<2x3xf32> -> tensor<2xf32>
    %b = gnn.broadcast_heads %d : tensor<2xf32> -> tensor<2x3xf32>
    %m = gnn.mul %b, %t : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %q = gnn.dropout %m {rate = 5.000000e-01 : f64} : tensor<2x3xf32>
    %y = gnn.linear %q, %ov : (tensor<2x3xf32>, tensor<2x3x?xf32>) -> tensor<?xf32>
    gnn.yield %y : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %h, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<?xf32>
}

// -----

// stop_gradient: the forward identity, and no gradient to its operand. The
// shift of a softmax (GAT's per-destination max) stops there, so the max
// gather gets no backward (no gather_grad) while the scores' gradient still
// flows through the other path of the subtraction.
// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         gnn.gather max
// CHECK-NOT:     gnn.gather_grad
// CHECK:         gnn.softmax_cross_entropy_grad
// CHECK-NOT:     gnn.gather_grad
// CHECK:         gnn.outer_sum
// CHECK-NOT:     gnn.gather_grad
// CHECK:         return
func.func @stop(%w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %m = gnn.gather max %g, %s to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%h, %m) : (!gnn.vtensor<?xf32>, !gnn.vtensor<?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
    %sb = gnn.stop_gradient %b : tensor<?xf32>
    %d = gnn.sub %a, %sb : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    gnn.yield %d : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}
