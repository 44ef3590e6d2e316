// RUN: gnn-opt %s -split-input-file --gnn-autodiff -verify-diagnostics

// expected-error @+1 {{expected exactly one function marked 'gnn.model' but found 0}}
module {
  func.func @f() {
    return
  }
}

// -----

func.func @computed_weight(%w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x?xf32>):
    %w2 = gnn.neg %wv : tensor<?x?xf32>
    // expected-error @+1 {{'gnn.linear' op weight must be a stage parameter to be differentiated}}
    %t = gnn.linear %v, %w2 : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %h, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<?xf32>
}

// -----

// expected-error @+1 {{the module already has a function '@gnn_eval' (was --gnn-autodiff run twice?)}}
module {
  func.func @m() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %loss = gnn.softmax_cross_entropy %x, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %x : f32, !gnn.vtensor<4xf32>
  }
  func.func @gnn_eval() {
    return
  }
}

// -----

// expected-error @+1 {{'func.func' op the loss must be computed by 'gnn.softmax_cross_entropy'}}
func.func @other_loss() -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.accuracy %x, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %x : f32, !gnn.vtensor<?xf32>
}

// -----

func.func @no_rule(%w: tensor<4x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<4x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<4xf32>, %wv: tensor<4x?xf32>):
    %y = gnn.linear %v, %wv : (tensor<4xf32>, tensor<4x?xf32>) -> tensor<?xf32>
    // expected-error @+1 {{'gnn.reduce_sum' op has no gradient rule}}
    %s = gnn.reduce_sum %y : tensor<?xf32> -> tensor<1xf32>
    %z = gnn.mul %y, %s : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
    gnn.yield %z : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}

// -----

func.func @dynamic_heads(%w: tensor<4x2xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>},
                         %c: tensor<2x?xf32> {gnn.param = "c", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]},
                         %o2: tensor<2x?x?xf32> {gnn.param = "o", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%x) params(%w, %c, %o2) : (!gnn.vtensor<4xf32>) params(tensor<4x2xf32>, tensor<2x?xf32>, tensor<2x?x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<4xf32>, %wv: tensor<4x2xf32>, %cv: tensor<2x?xf32>, %ov: tensor<2x?x?xf32>):
    %h = gnn.linear %v, %wv : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
    // expected-error @+1 {{'gnn.broadcast_heads' op needs a static result shape to be differentiated}}
    %b = gnn.broadcast_heads %h : tensor<2xf32> -> tensor<2x?xf32>
    %p = gnn.mul %b, %cv : (tensor<2x?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
    %y = gnn.linear %p, %ov : (tensor<2x?xf32>, tensor<2x?x?xf32>) -> tensor<?xf32>
    gnn.yield %y : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}
