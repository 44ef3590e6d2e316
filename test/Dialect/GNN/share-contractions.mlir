// RUN: gnn-opt %s -split-input-file --gnn-share-contractions -verify-diagnostics | FileCheck %s

// A ReLU layer's backward stage (as autodiff builds it) recomputes the
// pre-activation linear + b for ReLU's step: the forward stage yields the
// linear as a second result, the backward stage reads it and no longer
// takes the weight.

// CHECK-LABEL: func.func @relu_backward
// CHECK-SAME:    (%[[X:.*]]: !gnn.vtensor<8xf32>, %[[G:.*]]: !gnn.vtensor<4xf32>, %[[W:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK:         %[[F:.*]]:2 = gnn.apply_vertex %{{.*}}(%[[X]]) params(%[[W]], %[[B]]) : {{.*}} -> !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32> {
// CHECK:           %[[L:.*]] = gnn.linear
// CHECK:           %[[R:.*]] = gnn.relu
// CHECK:           gnn.yield %[[R]], %[[L]] : tensor<4xf32>, tensor<4xf32>
// CHECK:         %[[D:.*]] = gnn.apply_vertex %{{.*}}(%[[G]], %[[F]]#1) params(%[[B]]) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) params(tensor<4xf32>) -> !gnn.vtensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[GA:.*]]: tensor<4xf32>, %[[LA:.*]]: tensor<4xf32>, %[[BA:.*]]: tensor<4xf32>):
// CHECK-NOT:       gnn.linear
// CHECK:           gnn.add %[[LA]], %[[BA]]
// CHECK:         return %[[F]]#0, %[[D]]
func.func @relu_backward(%x: !gnn.vtensor<8xf32>, %gr: !gnn.vtensor<4xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  // expected-note @+1 {{computed by this stage}}
  %h = gnn.apply_vertex %g (%x) params(%w, %b) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>, tensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %wa: tensor<8x4xf32>, %ba: tensor<4xf32>):
    %t0 = gnn.linear %r, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    %t1 = gnn.add %t0, %ba : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t2 = gnn.relu %t1 : tensor<4xf32>
    gnn.yield %t2 : tensor<4xf32>
  }
  %d = gnn.apply_vertex %g (%x, %gr) params(%w, %b) : (!gnn.vtensor<8xf32>, !gnn.vtensor<4xf32>) params(tensor<8x4xf32>, tensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %gg: tensor<4xf32>, %wa: tensor<8x4xf32>, %ba: tensor<4xf32>):
    // expected-remark @+1 {{shared: the linear (rows of 'tensor<4xf32>') is read from an earlier stage, not recomputed}}
    %t0 = gnn.linear %r, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    %t1 = gnn.add %t0, %ba : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t2 = gnn.step %t1 : tensor<4xf32>
    %t3 = gnn.mul %gg, %t2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t3 : tensor<4xf32>
  }
  return %h, %d : !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>
}

// -----

// The earlier stage yields the contraction already (GAT's W·dropout(x)):
// its result is read, no result is added. Dropouts with the same mask id
// draw the same mask, so the recomputed dropout matches too.

// CHECK-LABEL: func.func @yielded
// CHECK:         %[[F:.*]] = gnn.apply_vertex %{{.*}} -> !gnn.vtensor<4xf32> {
// CHECK:         gnn.apply_vertex %{{.*}}(%{{.*}}, %[[F]]) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
// CHECK-NOT:       gnn.linear
// CHECK-NOT:       gnn.dropout
// CHECK:           gnn.mul
func.func @yielded(%x: !gnn.vtensor<8xf32>, %gr: !gnn.vtensor<4xf32>, %w: tensor<8x4xf32>) -> (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  // expected-note @+1 {{computed by this stage}}
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %wa: tensor<8x4xf32>):
    %d = gnn.dropout %r {mask_id = 3 : i64, rate = 0.5 : f64} : tensor<8xf32>
    %t0 = gnn.linear %d, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %d = gnn.apply_vertex %g (%x, %gr) params(%w) : (!gnn.vtensor<8xf32>, !gnn.vtensor<4xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %gg: tensor<4xf32>, %wa: tensor<8x4xf32>):
    %dd = gnn.dropout %r {mask_id = 3 : i64, rate = 0.5 : f64} : tensor<8xf32>
    // expected-remark @+1 {{shared}}
    %t0 = gnn.linear %dd, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    %t1 = gnn.mul %gg, %t0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t1 : tensor<4xf32>
  }
  return %h, %d : !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>
}

// -----

// A later stage reading the earlier stage's result h matches the earlier
// body's yielded value: linear(h) in the later stage is the earlier
// stage's second linear.

// CHECK-LABEL: func.func @through_result
// CHECK:         %[[F:.*]]:3 = gnn.apply_vertex
// CHECK:           %[[L:.*]] = gnn.linear %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4x2xf32>)
// CHECK:           gnn.yield %{{.*}}, %{{.*}}, %[[L]] :
// CHECK:         gnn.apply_vertex %{{.*}}(%[[F]]#2) : (!gnn.vtensor<2xf32>) -> !gnn.vtensor<2xf32> {
// CHECK-NOT:       gnn.linear
// CHECK:           gnn.tanh
func.func @through_result(%x: !gnn.vtensor<8xf32>, %w: tensor<8x4xf32>, %v: tensor<4x2xf32>) -> (!gnn.vtensor<2xf32>, !gnn.vtensor<2xf32>) {
  %g = gnn.graph : !gnn.graph
  // expected-note @+1 {{computed by this stage}}
  %h:2 = gnn.apply_vertex %g (%x) params(%w, %v) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>, tensor<4x2xf32>) -> !gnn.vtensor<4xf32>, !gnn.vtensor<2xf32> {
  ^bb0(%r: tensor<8xf32>, %wa: tensor<8x4xf32>, %va: tensor<4x2xf32>):
    %t0 = gnn.linear %r, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    %t1 = gnn.relu %t0 : tensor<4xf32>
    %t2 = gnn.linear %t1, %va : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
    %t3 = gnn.sigmoid %t2 : tensor<2xf32>
    gnn.yield %t1, %t3 : tensor<4xf32>, tensor<2xf32>
  }
  %d = gnn.apply_vertex %g (%h#0) params(%v) : (!gnn.vtensor<4xf32>) params(tensor<4x2xf32>) -> !gnn.vtensor<2xf32> {
  ^bb0(%r: tensor<4xf32>, %va: tensor<4x2xf32>):
    // expected-remark @+1 {{shared}}
    %t0 = gnn.linear %r, %va : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
    %t1 = gnn.tanh %t0 : tensor<2xf32>
    gnn.yield %t1 : tensor<2xf32>
  }
  return %h#1, %d : !gnn.vtensor<2xf32>, !gnn.vtensor<2xf32>
}

// -----

// Not the same value, so nothing is shared: another weight, another
// dropout mask, another input, a later stage's linear (sharing only looks
// backwards), and an edge stage (another kind of rows).

// CHECK-LABEL: func.func @different
// CHECK-COUNT-5: gnn.linear
// CHECK-NOT:     gnn.linear
func.func @different(%x: !gnn.vtensor<8xf32>, %y: !gnn.vtensor<8xf32>, %w: tensor<8x4xf32>, %w2: tensor<8x4xf32>) -> (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.etensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %wa: tensor<8x4xf32>):
    %d = gnn.dropout %r {mask_id = 0 : i64, rate = 0.5 : f64} : tensor<8xf32>
    %t0 = gnn.linear %d, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %a = gnn.apply_vertex %g (%x) params(%w2) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %wa: tensor<8x4xf32>):
    %d = gnn.dropout %r {mask_id = 0 : i64, rate = 0.5 : f64} : tensor<8xf32>
    %t0 = gnn.linear %d, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %b = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %wa: tensor<8x4xf32>):
    %d = gnn.dropout %r {mask_id = 1 : i64, rate = 0.5 : f64} : tensor<8xf32>
    %t0 = gnn.linear %d, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %c = gnn.apply_vertex %g (%y) params(%w) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %wa: tensor<8x4xf32>):
    %d = gnn.dropout %r {mask_id = 0 : i64, rate = 0.5 : f64} : tensor<8xf32>
    %t0 = gnn.linear %d, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %e = gnn.apply_edge %g (%s) params(%w) : (!gnn.etensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %wa: tensor<8x4xf32>):
    %t0 = gnn.linear %r, %wa : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  return %h, %a, %b, %c, %e : !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.etensor<4xf32>
}
