// RUN: gnn-opt %s -split-input-file --gnn-partition-rows -verify-diagnostics

// What row partitioning cannot split is refused, naming the op.

func.func @mean_to_src() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %d = gnn.scatter %g, %x from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  // expected-error @+1 {{'gnn.gather' op aggregates with 'mean' to the source, which a row-partitioned function cannot: only partial sums add up over the processes}}
  %a = gnn.gather mean %g, %d to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<4xf32>
}

// -----

func.func @max_to_src() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.fused_gather' op aggregates with 'max' to the source}}
  %a = gnn.fused_gather max %g dst(%x : !gnn.vtensor<4xf32>) to src : !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<4xf32>):
    gnn.yield %r : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<4xf32>
}

// -----

func.func @readout(%w: tensor<4xf32> {gnn.param = "w", gnn.init = #gnn.init<zeros>}) -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.sum_rows' op reduces over all vertices in the forward, which a partitioned function does not split yet}}
  %s = gnn.sum_rows %x : !gnn.vtensor<4xf32> -> tensor<4xf32>
  %o = gnn.apply_vertex %g (%x) params(%s) : (!gnn.vtensor<4xf32>) params(tensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<4xf32>, %t: tensor<4xf32>):
    %r = gnn.add %v, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<4xf32>
}

// -----

// expected-error @+1 {{the module already has a function '@gnn_eval' (run --gnn-partition-rows before --gnn-autodiff)}}
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

// expected-error @+1 {{is partitioned already}}
func.func @twice() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model, gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %x, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %x : f32, !gnn.vtensor<4xf32>
}
