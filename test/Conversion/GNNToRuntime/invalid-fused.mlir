// RUN: gnn-opt %s -split-input-file --convert-gnn-to-runtime -verify-diagnostics

// The errors of fused_gather lowering, on fused_gathers written directly.

module {
  func.func @gnn_train_step() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    // expected-error @+1 {{'gnn.fused_gather' op cannot size its result: no operand has rows of type 'tensor<2x?xf32>'}}
    %o = gnn.fused_gather sum %g src(%x : !gnn.vtensor<2xf32>) to dst : !gnn.vtensor<2x?xf32> {
    ^bb0(%a: tensor<2xf32>):
      %r = gnn.broadcast_heads %a : tensor<2xf32> -> tensor<2x?xf32>
      gnn.yield %r : tensor<2x?xf32>
    }
    %h = gnn.apply_vertex %g(%o) : (!gnn.vtensor<2x?xf32>) -> !gnn.vtensor<2xf32> {
    ^bb0(%v: tensor<2x?xf32>):
      %d = gnn.row_dot %v, %v : tensor<2x?xf32> -> tensor<2xf32>
      gnn.yield %d : tensor<2xf32>
    }
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %s = gnn.softmax_cross_entropy %h, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %s, %h : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() { return }
}

// -----

module {
  func.func @gnn_train_step() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    // expected-error @+1 {{'gnn.fused_gather' op has a row of shape 'tensor<2x?xf32>' whose width is unknown}}
    %o = gnn.fused_gather sum %g src(%x : !gnn.vtensor<2xf32>) to dst : !gnn.vtensor<2xf32> {
    ^bb0(%a: tensor<2xf32>):
      %r = gnn.broadcast_heads %a : tensor<2xf32> -> tensor<2x?xf32>
      %d = gnn.row_dot %r, %r : tensor<2x?xf32> -> tensor<2xf32>
      gnn.yield %d : tensor<2xf32>
    }
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %s = gnn.softmax_cross_entropy %o, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %s, %o : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() { return }
}

// -----

// A per-edge scale computed in the body goes through an edge-parallel kernel
// over f32 rows.
module {
  func.func @gnn_train_step() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %t = gnn.input %g "etype" : !gnn.etensor<1xi32>
    %dg = gnn.degree %g in : !gnn.vtensor<1xf32>
    // expected-error @+1 {{'gnn.fused_gather' op reads a non-f32 row in a per-edge scalar}}
    %o = gnn.fused_gather sum %g src(%x : !gnn.vtensor<2xf32>) dst(%dg : !gnn.vtensor<1xf32>) edge(%t : !gnn.etensor<1xi32>) to dst : !gnn.vtensor<2xf32> {
    ^bb0(%a: tensor<2xf32>, %d: tensor<1xf32>, %ty: tensor<1xi32>):
      %r = gnn.rsqrt %d : tensor<1xf32>
      %p = gnn.mul %a, %r : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
      gnn.yield %p : tensor<2xf32>
    }
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %s = gnn.softmax_cross_entropy %o, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %s, %o : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() { return }
}
