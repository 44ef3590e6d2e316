// RUN: gnn-opt %s -split-input-file --gnn-autodiff | FileCheck %s

// One GCN-like layer: scatter -> weight by an edge scalar -> gather sum ->
// linear + bias. The backward scatters the accumulation's gradient from the
// destination side, and the weight gradient is one outer_sum over the rows.

// CHECK-LABEL: func.func @gnn_eval
// CHECK-NOT:     gnn.dropout
// CHECK:         return
// CHECK-LABEL: func.func @gnn_train_step
// CHECK-SAME:    -> (f32, !gnn.vtensor<?xf32>, tensor<?x?xf32>, tensor<?xf32>)
// CHECK:         %[[X:.*]] = gnn.input %{{.*}} "features"
// CHECK:         %[[A:.*]] = gnn.gather sum %{{.*}}, %{{.*}} to dst
// CHECK:         %[[LOSS:.*]] = gnn.softmax_cross_entropy %[[LOGITS:.*]], %{{.*}}, %{{.*}}
// CHECK:         %[[DL:.*]] = gnn.softmax_cross_entropy_grad %[[LOGITS]]
// CHECK:         %[[BW:.*]]:2 = gnn.apply_vertex %{{.*}}(%[[A]], %[[DL]])
// CHECK:         %[[DW:.*]] = gnn.outer_sum %[[A]], %[[BW]]#0
// CHECK:         %[[DB:.*]] = gnn.sum_rows %[[BW]]#1
// The features need no gradient: no scatter of a gradient to the edges.
// CHECK-NOT:     gnn.scatter
// CHECK:         gnn.optimizer_update "w" %{{.*}}, %[[DW]]
// CHECK:         gnn.optimizer_update "b" %{{.*}}, %[[DB]]
func.func @layer(%w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "classes"]},
                 %b: tensor<?xf32> {gnn.param = "b", gnn.init = #gnn.init<zeros>, gnn.dims = ["classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %d = gnn.degree %g in : !gnn.vtensor<1xf32>
  %sd = gnn.scatter %g, %d from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %m = gnn.apply_edge %g (%s, %sd) : (!gnn.etensor<?xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<?xf32> {
  ^bb0(%r: tensor<?xf32>, %n: tensor<1xf32>):
    %t = gnn.div %r, %n : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%a) params(%w, %b) : (!gnn.vtensor<?xf32>) params(tensor<?x?xf32>, tensor<?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x?xf32>, %bv: tensor<?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
    %u = gnn.add %t, %bv : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    gnn.yield %u : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}

// -----

// Two layers with a mean gather and a dropout: the hidden layer's gradient
// flows back through the mean (divide by the in-degree, scatter from dst)
// and the scatter from src (gather sum to src); the dropout's mask is shared
// by the forward and the backward (mask_id).

// CHECK-LABEL: func.func @sage
// CHECK:         gnn.dropout %{{.*}} {mask_id = 0 : i64
// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         %[[H:.*]] = gnn.apply_vertex
// CHECK:         gnn.dropout %{{.*}} {mask_id = 0 : i64
// CHECK:         gnn.softmax_cross_entropy_grad
// CHECK:         %[[DEG:.*]] = gnn.degree %{{.*}} in
// CHECK:         %[[DIV:.*]] = gnn.apply_vertex %{{.*}}(%{{.*}}, %[[DEG]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      gnn.div
// CHECK:         %[[SC:.*]] = gnn.scatter %{{.*}}, %[[DIV]] from dst
// CHECK:         %[[BACK:.*]] = gnn.gather sum %{{.*}}, %[[SC]] to src
// CHECK:         gnn.apply_vertex %{{.*}}(%{{.*}}, %{{.*}}) params
// CHECK:         gnn.dropout %{{.*}} {mask_id = 0 : i64
// CHECK:         gnn.step
// CHECK:         gnn.optimizer_update "l1.w"
// CHECK:         gnn.optimizer_update "l2.w"
func.func @sage(%w1: tensor<?x8xf32> {gnn.param = "l1.w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
                %w2: tensor<8x?xf32> {gnn.param = "l2.w", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w1) : (!gnn.vtensor<?xf32>) params(tensor<?x8xf32>) -> !gnn.vtensor<8xf32> {
  ^bb0(%v: tensor<?xf32>, %w: tensor<?x8xf32>):
    %t = gnn.linear %v, %w : (tensor<?xf32>, tensor<?x8xf32>) -> tensor<8xf32>
    %r = gnn.relu %t : tensor<8xf32>
    %d = gnn.dropout %r {rate = 5.000000e-01 : f64} : tensor<8xf32>
    gnn.yield %d : tensor<8xf32>
  }
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %a = gnn.gather mean %g, %s to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  %o = gnn.apply_vertex %g (%a) params(%w2) : (!gnn.vtensor<8xf32>) params(tensor<8x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<8xf32>, %w: tensor<8x?xf32>):
    %t = gnn.linear %v, %w : (tensor<8xf32>, tensor<8x?xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}

// -----

// A max gather routes its gradient to the chosen edges (gather_grad); a typed
// linear's weight gradient is one grouped GEMM over the edges
// (typed_outer_sum) with the edge types as the grouping.

// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         %[[T:.*]] = gnn.input %{{.*}} "type" : !gnn.etensor<i32>
// CHECK:         %[[M:.*]] = gnn.apply_edge %{{.*}}(%[[S:.*]], %[[T]]) params
// CHECK:         %[[A:.*]] = gnn.gather max %{{.*}}, %[[M]] to dst
// CHECK:         %[[DE:.*]] = gnn.gather_grad max %{{.*}}, %{{.*}}, %[[M]] to dst
// CHECK:         %[[BW:.*]] = gnn.apply_edge %{{.*}}(%[[S]], %[[T]], %[[DE]]) params
// CHECK:         gnn.typed_outer_sum %[[S]], %[[T]], %[[BW]] : !gnn.etensor<4xf32>, !gnn.etensor<i32>, !gnn.etensor<4xf32> -> tensor<3x4x4xf32>
// CHECK:         gnn.optimizer_update "a"
func.func @typed_max(%a: tensor<3x4x4xf32> {gnn.param = "a", gnn.init = #gnn.init<glorot>},
                     %w: tensor<4x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %t = gnn.input %g "type" : !gnn.etensor<i32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%s, %t) params(%a) : (!gnn.etensor<4xf32>, !gnn.etensor<i32>) params(tensor<3x4x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%r: tensor<4xf32>, %ty: tensor<i32>, %av: tensor<3x4x4xf32>):
    %y = gnn.typed_linear %r, %ty, %av : (tensor<4xf32>, tensor<i32>, tensor<3x4x4xf32>) -> tensor<4xf32>
    gnn.yield %y : tensor<4xf32>
  }
  %agg = gnn.gather max %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%agg) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<4x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<4xf32>, %wv: tensor<4x?xf32>):
    %y = gnn.linear %v, %wv : (tensor<4xf32>, tensor<4x?xf32>) -> tensor<?xf32>
    gnn.yield %y : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}
