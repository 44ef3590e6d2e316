// RUN: gnn-opt %s -split-input-file --gnn-defer-transposes -verify-diagnostics | FileCheck %s

// A conv2-style backward stage: it yields the gradient g of its output and
// g W^T for the previous layer. The weight gradient (outer_sum of the layer
// input h with g) comes first, so g W^T moves into its own stage right
// before its reader: h is read last by the outer_sum, before the product is
// born. The old stage keeps g only and no longer takes W.

// CHECK-LABEL: func.func @deferred
// CHECK-SAME:    (%[[H:.*]]: !gnn.vtensor<16xf32>, %[[G:.*]]: !gnn.vtensor<4xf32>, %[[W:.*]]: tensor<16x4xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK:         %[[S:.*]] = gnn.apply_vertex %{{.*}}(%[[G]]) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
// CHECK-NOT:       gnn.linear_transpose
// CHECK:           gnn.yield
// CHECK:         %[[WG:.*]] = gnn.outer_sum %[[H]], %[[S]]
// CHECK-NEXT:    %[[GH:.*]] = gnn.apply_vertex %{{.*}}(%[[S]]) params(%[[W]]) : (!gnn.vtensor<4xf32>) params(tensor<16x4xf32>) -> !gnn.vtensor<16xf32> {
// CHECK-NEXT:    ^bb0(%[[GA:.*]]: tensor<4xf32>, %[[WA:.*]]: tensor<16x4xf32>):
// CHECK-NEXT:      %[[T:.*]] = gnn.linear_transpose %[[GA]], %[[WA]]
// CHECK-NEXT:      gnn.yield %[[T]] : tensor<16xf32>
// CHECK:         gnn.apply_vertex %{{.*}}(%[[GH]]) params(%[[B]])
func.func @deferred(%h: !gnn.vtensor<16xf32>, %gin: !gnn.vtensor<4xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) -> (tensor<16x4xf32>, !gnn.vtensor<16xf32>) {
  %g = gnn.graph : !gnn.graph
  // expected-remark @+1 {{deferred: the gnn.linear_transpose (rows of 'tensor<16xf32>') is computed here, right before its first reader, not in its stage}}
  %s:2 = gnn.apply_vertex %g (%gin) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<16x4xf32>) -> !gnn.vtensor<4xf32>, !gnn.vtensor<16xf32> {
  ^bb0(%gg: tensor<4xf32>, %wa: tensor<16x4xf32>):
    %two = gnn.constant dense<2.0> : tensor<f32>
    %d = gnn.mul %gg, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %t = gnn.linear_transpose %d, %wa : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16xf32>
    gnn.yield %d, %t : tensor<4xf32>, tensor<16xf32>
  }
  %wg = gnn.outer_sum %h, %s#0 : !gnn.vtensor<16xf32>, !gnn.vtensor<4xf32> -> tensor<16x4xf32>
  %o = gnn.apply_vertex %g (%s#1) params(%b) : (!gnn.vtensor<16xf32>) params(tensor<16xf32>) -> !gnn.vtensor<16xf32> {
  ^bb0(%r: tensor<16xf32>, %ba: tensor<16xf32>):
    %y = gnn.add %r, %ba : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    gnn.yield %y : tensor<16xf32>
  }
  return %wg, %o : tensor<16x4xf32>, !gnn.vtensor<16xf32>
}

// -----

// Kept: the op right after the stage reads the product (nothing dies in
// between).

// CHECK-LABEL: func.func @read_next
// CHECK:         gnn.apply_vertex {{.*}} -> !gnn.vtensor<4xf32>, !gnn.vtensor<16xf32> {
// CHECK:           gnn.linear_transpose
// CHECK-NOT:     gnn.linear_transpose
func.func @read_next(%h: !gnn.vtensor<16xf32>, %gin: !gnn.vtensor<4xf32>, %w: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<16xf32>) {
  %g = gnn.graph : !gnn.graph
  %s:2 = gnn.apply_vertex %g (%gin) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<16x4xf32>) -> !gnn.vtensor<4xf32>, !gnn.vtensor<16xf32> {
  ^bb0(%gg: tensor<4xf32>, %wa: tensor<16x4xf32>):
    %t = gnn.linear_transpose %gg, %wa : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16xf32>
    gnn.yield %gg, %t : tensor<4xf32>, tensor<16xf32>
  }
  %sum = gnn.sum_rows %s#1 : !gnn.vtensor<16xf32> -> tensor<16xf32>
  %wg = gnn.outer_sum %h, %s#0 : !gnn.vtensor<16xf32>, !gnn.vtensor<4xf32> -> tensor<16x4xf32>
  return %wg, %sum : tensor<16x4xf32>, tensor<16xf32>
}

// -----

// Kept: the product's row is computed in the stage and not yielded (the new
// stage would have to recompute it), and, in the second stage, the row is
// wider than the product (deferring would keep 16 floats per vertex alive
// to save 4).

// CHECK-LABEL: func.func @kept
// CHECK:         gnn.apply_vertex {{.*}} -> !gnn.vtensor<4xf32>, !gnn.vtensor<16xf32> {
// CHECK:           gnn.linear_transpose
// CHECK:         gnn.apply_vertex {{.*}} -> !gnn.vtensor<16xf32>, !gnn.vtensor<4xf32> {
// CHECK:           gnn.linear_transpose
// CHECK-NOT:     gnn.linear_transpose
func.func @kept(%h: !gnn.vtensor<16xf32>, %gin: !gnn.vtensor<4xf32>, %w: tensor<16x4xf32>, %w2: tensor<4x16xf32>) -> (tensor<16x4xf32>, tensor<16xf32>, tensor<4x16xf32>, tensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %s:2 = gnn.apply_vertex %g (%gin) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<16x4xf32>) -> !gnn.vtensor<4xf32>, !gnn.vtensor<16xf32> {
  ^bb0(%gg: tensor<4xf32>, %wa: tensor<16x4xf32>):
    %two = gnn.constant dense<2.0> : tensor<f32>
    %d = gnn.mul %gg, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %t = gnn.linear_transpose %d, %wa : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16xf32>
    gnn.yield %gg, %t : tensor<4xf32>, tensor<16xf32>
  }
  %wg = gnn.outer_sum %h, %s#0 : !gnn.vtensor<16xf32>, !gnn.vtensor<4xf32> -> tensor<16x4xf32>
  %sum = gnn.sum_rows %s#1 : !gnn.vtensor<16xf32> -> tensor<16xf32>
  %u:2 = gnn.apply_vertex %g (%h) params(%w2) : (!gnn.vtensor<16xf32>) params(tensor<4x16xf32>) -> !gnn.vtensor<16xf32>, !gnn.vtensor<4xf32> {
  ^bb0(%hh: tensor<16xf32>, %wa: tensor<4x16xf32>):
    %t = gnn.linear_transpose %hh, %wa : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4xf32>
    gnn.yield %hh, %t : tensor<16xf32>, tensor<4xf32>
  }
  %wg2 = gnn.outer_sum %gin, %u#0 : !gnn.vtensor<4xf32>, !gnn.vtensor<16xf32> -> tensor<4x16xf32>
  %sum2 = gnn.sum_rows %u#1 : !gnn.vtensor<4xf32> -> tensor<4xf32>
  return %wg, %sum, %wg2, %sum2 : tensor<16x4xf32>, tensor<16xf32>, tensor<4x16xf32>, tensor<4xf32>
}

// -----

// GCN's conv2 backward (after canonicalization) yields its input row g
// twice, for the weight and the bias gradient, and reads it in the
// transpose: the new stage reads the stage's input; the old one keeps the
// two pass-through results and drops the weight.

// CHECK-LABEL: func.func @pass_through
// CHECK-SAME:    (%[[H:.*]]: !gnn.vtensor<16xf32>, %[[G:.*]]: !gnn.vtensor<4xf32>, %[[W:.*]]: tensor<16x4xf32>)
// CHECK:         %[[S:.*]]:2 = gnn.apply_vertex %{{.*}}(%[[G]]) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4xf32>):
// CHECK-NEXT:      gnn.yield %[[A]], %[[A]] : tensor<4xf32>, tensor<4xf32>
// CHECK:         gnn.outer_sum %[[H]], %[[S]]#0
// CHECK-NEXT:    gnn.sum_rows %[[S]]#1
// CHECK-NEXT:    %[[T:.*]] = gnn.apply_vertex %{{.*}}(%[[G]]) params(%[[W]])
// CHECK:         return %{{.*}}, %{{.*}}, %[[T]]
func.func @pass_through(%h: !gnn.vtensor<16xf32>, %gin: !gnn.vtensor<4xf32>, %w: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<4xf32>, !gnn.vtensor<16xf32>) {
  %g = gnn.graph : !gnn.graph
  // expected-remark @+1 {{deferred: the gnn.linear_transpose}}
  %s:3 = gnn.apply_vertex %g (%h, %gin) params(%w) : (!gnn.vtensor<16xf32>, !gnn.vtensor<4xf32>) params(tensor<16x4xf32>) -> !gnn.vtensor<4xf32>, !gnn.vtensor<16xf32>, !gnn.vtensor<4xf32> {
  ^bb0(%hh: tensor<16xf32>, %gg: tensor<4xf32>, %wa: tensor<16x4xf32>):
    %t = gnn.linear_transpose %gg, %wa : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16xf32>
    gnn.yield %gg, %t, %gg : tensor<4xf32>, tensor<16xf32>, tensor<4xf32>
  }
  %wg = gnn.outer_sum %h, %s#0 : !gnn.vtensor<16xf32>, !gnn.vtensor<4xf32> -> tensor<16x4xf32>
  %sum = gnn.sum_rows %s#2 : !gnn.vtensor<4xf32> -> tensor<4xf32>
  return %wg, %sum, %s#1 : tensor<16x4xf32>, tensor<4xf32>, !gnn.vtensor<16xf32>
}

// -----

// A stage whose only result moves is erased. A transpose with an optimizer
// update of its weight before its reader stays (the update writes the
// weight in place).

// CHECK-LABEL: func.func @all_moved
// CHECK-SAME:    (%[[H:.*]]: !gnn.vtensor<16xf32>, %[[G:.*]]: !gnn.vtensor<4xf32>, %[[W:.*]]: tensor<16x4xf32>)
// CHECK-NEXT:    %[[GR:.*]] = gnn.graph
// CHECK-NEXT:    gnn.outer_sum %[[H]], %[[G]]
// CHECK-NEXT:    %[[T:.*]] = gnn.apply_vertex %[[GR]](%[[G]]) params(%[[W]])
// CHECK:         gnn.linear_transpose
// CHECK:         return %{{.*}}, %[[T]]
func.func @all_moved(%h: !gnn.vtensor<16xf32>, %gin: !gnn.vtensor<4xf32>, %w: tensor<16x4xf32>) -> (tensor<16x4xf32>, !gnn.vtensor<16xf32>) {
  %g = gnn.graph : !gnn.graph
  // expected-remark @+1 {{deferred: the gnn.linear_transpose}}
  %s = gnn.apply_vertex %g (%gin) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<16x4xf32>) -> !gnn.vtensor<16xf32> {
  ^bb0(%gg: tensor<4xf32>, %wa: tensor<16x4xf32>):
    %t = gnn.linear_transpose %gg, %wa : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16xf32>
    gnn.yield %t : tensor<16xf32>
  }
  %wg = gnn.outer_sum %h, %gin : !gnn.vtensor<16xf32>, !gnn.vtensor<4xf32> -> tensor<16x4xf32>
  return %wg, %s : tensor<16x4xf32>, !gnn.vtensor<16xf32>
}

// CHECK-LABEL: func.func @updated_between
// CHECK:         gnn.apply_vertex {{.*}} -> !gnn.vtensor<4xf32>, !gnn.vtensor<16xf32> {
// CHECK:           gnn.linear_transpose
// CHECK-NOT:     gnn.linear_transpose
func.func @updated_between(%h: !gnn.vtensor<16xf32>, %gin: !gnn.vtensor<4xf32>, %w: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<16xf32>) {
  %g = gnn.graph : !gnn.graph
  %s:2 = gnn.apply_vertex %g (%gin) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<16x4xf32>) -> !gnn.vtensor<4xf32>, !gnn.vtensor<16xf32> {
  ^bb0(%gg: tensor<4xf32>, %wa: tensor<16x4xf32>):
    %t = gnn.linear_transpose %gg, %wa : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16xf32>
    gnn.yield %gg, %t : tensor<4xf32>, tensor<16xf32>
  }
  %wg = gnn.outer_sum %h, %s#0 : !gnn.vtensor<16xf32>, !gnn.vtensor<4xf32> -> tensor<16x4xf32>
  %nw = gnn.optimizer_update "w" %w, %wg : tensor<16x4xf32>
  %sum = gnn.sum_rows %s#1 : !gnn.vtensor<16xf32> -> tensor<16xf32>
  return %nw, %sum : tensor<16x4xf32>, tensor<16xf32>
}
