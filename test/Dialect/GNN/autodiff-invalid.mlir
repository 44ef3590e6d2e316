// RUN: gnn-opt %s -split-input-file --gnn-autodiff -verify-diagnostics

// expected-error @+1 {{expected exactly one function marked 'gnn.model' but found 0}}
module {
  func.func @f() {
    return
  }
}

// -----

func.func @maxpool(%w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  // expected-error @+1 {{'gnn.gather' op 'max' gathers are not differentiated yet (only sum and mean)}}
  %a = gnn.gather max %g, %s to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<?xf32>
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

func.func @typed(%a: tensor<3x4x4xf32> {gnn.param = "a", gnn.init = #gnn.init<glorot>},
                 %w: tensor<4x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %t = gnn.input %g "type" : !gnn.etensor<i32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%s, %t) params(%a) : (!gnn.etensor<4xf32>, !gnn.etensor<i32>) params(tensor<3x4x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%r: tensor<4xf32>, %ty: tensor<i32>, %av: tensor<3x4x4xf32>):
    // expected-error @+1 {{'gnn.typed_linear' op has no gradient rule}}
    %y = gnn.typed_linear %r, %ty, %av : (tensor<4xf32>, tensor<i32>, tensor<3x4x4xf32>) -> tensor<4xf32>
    gnn.yield %y : tensor<4xf32>
  }
  %agg = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
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

// -----

// expected-error @+1 {{the module already has a function '@gnn_eval' (was --gnn-autodiff run twice?)}}
module {
  func.func @m() -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %loss = gnn.softmax_cross_entropy %x, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %x : f32, !gnn.vtensor<?xf32>
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
