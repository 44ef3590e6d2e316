// RUN: gnn-opt %s -split-input-file --gnn-reorder-aggregate="features=602 classes=41" -verify-diagnostics | FileCheck %s

// PEERS.md's anchor: a 602 -> 128 transform after the aggregation moves before
// it (the aggregation runs at 128); the weighted edge stage follows.

// CHECK-LABEL: func.func @narrowing
// CHECK:         %[[HW:.*]] = gnn.apply_vertex %{{.*}}(%[[X:.*]]) params(%[[W:.*]]) : (!gnn.vtensor<?xf32>) params(tensor<?x128xf32>) -> !gnn.vtensor<128xf32>
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      gnn.linear
// CHECK:         %[[S:.*]] = gnn.scatter %{{.*}}, %[[HW]] from src : !gnn.vtensor<128xf32> -> !gnn.etensor<128xf32>
// CHECK:         %[[M:.*]] = gnn.apply_edge %{{.*}}(%[[S]], %{{.*}}) : (!gnn.etensor<128xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<128xf32>
// CHECK:         %[[A:.*]] = gnn.gather sum %{{.*}}, %[[M]] to dst : !gnn.etensor<128xf32> -> !gnn.vtensor<128xf32>
// CHECK:         gnn.apply_vertex %{{.*}}(%[[A]]) params
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: tensor<128xf32>,
// CHECK-NOT:       gnn.linear
// CHECK:           gnn.relu %[[ACC]]
func.func @narrowing(%w: tensor<?x128xf32> {gnn.dims = ["features", ""]}, %x: !gnn.vtensor<?xf32>, %n: !gnn.etensor<1xf32>) -> !gnn.vtensor<128xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %m = gnn.apply_edge %g (%s, %n) : (!gnn.etensor<?xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<?xf32> {
  ^bb0(%r: tensor<?xf32>, %c: tensor<1xf32>):
    %t = gnn.mul %r, %c : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  // expected-remark @+1 {{aggregation reordered: width 602 -> 128}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%a) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x128xf32>) -> !gnn.vtensor<128xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x128xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x128xf32>) -> tensor<128xf32>
    %r = gnn.relu %t : tensor<128xf32>
    gnn.yield %r : tensor<128xf32>
  }
  return %o : !gnn.vtensor<128xf32>
}

// -----

// PEERS.md's other anchor: 128 -> 256 would aggregate wider; refused. A mean
// gather of a plain scatter is matched too.
// CHECK-LABEL: func.func @widening
// CHECK:         gnn.gather mean %{{.*}} : !gnn.etensor<128xf32> -> !gnn.vtensor<128xf32>
// CHECK:         gnn.linear
func.func @widening(%w: tensor<128x256xf32>, %x: !gnn.vtensor<128xf32>) -> !gnn.vtensor<256xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<128xf32> -> !gnn.etensor<128xf32>
  // expected-remark @+1 {{aggregation not reordered: it would run at width 256 instead of 128}}
  %a = gnn.gather mean %g, %s to dst : !gnn.etensor<128xf32> -> !gnn.vtensor<128xf32>
  %o = gnn.apply_vertex %g (%a) params(%w) : (!gnn.vtensor<128xf32>) params(tensor<128x256xf32>) -> !gnn.vtensor<256xf32> {
  ^bb0(%v: tensor<128xf32>, %wv: tensor<128x256xf32>):
    %t = gnn.linear %v, %wv : (tensor<128xf32>, tensor<128x256xf32>) -> tensor<256xf32>
    gnn.yield %t : tensor<256xf32>
  }
  return %o : !gnn.vtensor<256xf32>
}

// -----

// A dynamic width without a binding is unknown: refused.
// CHECK-LABEL: func.func @unknown
// CHECK:         gnn.gather sum %{{.*}} : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
func.func @unknown(%w: tensor<?x8xf32>, %x: !gnn.vtensor<?xf32>) -> !gnn.vtensor<8xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  // expected-remark @+1 {{aggregation not reordered: a width is unknown (give features=, classes= or meta=)}}
  %a = gnn.gather sum %g, %s to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%a) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x8xf32>) -> !gnn.vtensor<8xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x8xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x8xf32>) -> tensor<8xf32>
    gnn.yield %t : tensor<8xf32>
  }
  return %o : !gnn.vtensor<8xf32>
}

// -----

// Not a candidate (no remark): the aggregated row is used by more than the
// linear, and a max gather does not commute with a linear.
// CHECK-LABEL: func.func @not_candidates
// CHECK-COUNT-2: gnn.gather
func.func @not_candidates(%w: tensor<64x8xf32>, %x: !gnn.vtensor<64xf32>) -> (!gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<64xf32> -> !gnn.etensor<64xf32>
  %a = gnn.gather sum %g, %s to dst : !gnn.etensor<64xf32> -> !gnn.vtensor<64xf32>
  %o = gnn.apply_vertex %g (%a) params(%w) : (!gnn.vtensor<64xf32>) params(tensor<64x8xf32>) -> !gnn.vtensor<8xf32> {
  ^bb0(%v: tensor<64xf32>, %wv: tensor<64x8xf32>):
    %t = gnn.linear %v, %wv : (tensor<64xf32>, tensor<64x8xf32>) -> tensor<8xf32>
    %u = gnn.reduce_sum %v : tensor<64xf32> -> tensor<1xf32>
    %r = gnn.mul %t, %u : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
    gnn.yield %r : tensor<8xf32>
  }
  %b = gnn.gather max %g, %s to dst : !gnn.etensor<64xf32> -> !gnn.vtensor<64xf32>
  %p = gnn.apply_vertex %g (%b) params(%w) : (!gnn.vtensor<64xf32>) params(tensor<64x8xf32>) -> !gnn.vtensor<8xf32> {
  ^bb0(%v: tensor<64xf32>, %wv: tensor<64x8xf32>):
    %t = gnn.linear %v, %wv : (tensor<64xf32>, tensor<64x8xf32>) -> tensor<8xf32>
    gnn.yield %t : tensor<8xf32>
  }
  return %o, %p : !gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>
}
