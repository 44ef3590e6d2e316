// RUN: gnn-opt %s -split-input-file --gnn-partition-features -verify-diagnostics

// What feature partitioning cannot split is refused, naming the op (P3-2).

// GAT's attention score contracts the features of both ends: not
// column-separable before the first contraction.
func.func @attention_on_features(%w1: tensor<?x4xf32> {gnn.param = "w1", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %d = gnn.scatter %g, %x from dst : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %e = gnn.apply_edge %g (%s, %d) : (!gnn.etensor<?xf32>, !gnn.etensor<?xf32>) -> !gnn.etensor<?xf32> {
  ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
    // expected-error @+1 {{'gnn.row_dot' op is not column-separable}}
    %t0 = gnn.row_dot %a, %b : tensor<?xf32> -> tensor<1xf32>
    %t1 = gnn.mul %a, %t0 : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
    gnn.yield %t1 : tensor<?xf32>
  }
  %agg = gnn.gather sum %g, %e to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%agg) params(%w1) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<?xf32>, %w: tensor<?x4xf32>):
    %t0 = gnn.linear %a, %w : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %h, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<4xf32>
}

// -----

// The contraction's weight does not have the features as its rows.
func.func @weight_not_split(%w1: tensor<8x4xf32> {gnn.param = "w1", gnn.init = #gnn.init<glorot>})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<8xf32>
  %h = gnn.apply_vertex %g (%x) params(%w1) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<8xf32>, %w: tensor<8x4xf32>):
    // expected-error @+1 {{'gnn.linear' op is not column-separable}}
    %t0 = gnn.linear %a, %w : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %h, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<4xf32>
}

// -----

// The features reach the loss without a contraction.
func.func @no_contraction() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a = gnn.gather sum %g, %s to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  // expected-error @+1 {{'gnn.softmax_cross_entropy' op reads every vertex's feature columns of this process (layer 1 before its first contraction), which it cannot work on}}
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<4xf32>
}

// -----

// The feature shard read again after the sum.
func.func @shard_after_sum(%w1: tensor<?x4xf32> {gnn.param = "w1", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w1) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%a: tensor<?xf32>, %w: tensor<?x4xf32>):
    %t0 = gnn.linear %a, %w : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    %t1 = gnn.relu %t0 : tensor<4xf32>
    // expected-error @+1 {{'gnn.concat' op reads this process's feature columns after the sum of the partials}}
    %t2 = gnn.concat %t1, %a : (tensor<4xf32>, tensor<?xf32>) -> tensor<?xf32>
    gnn.yield %t2 : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %h, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<?xf32>
}

// -----

// expected-error @+1 {{has no 'features' input, which feature partitioning splits}}
func.func @no_features() -> (f32, !gnn.vtensor<1xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %d = gnn.degree %g in : !gnn.vtensor<1xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %d, %labels, %mask : !gnn.vtensor<1xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %d : f32, !gnn.vtensor<1xf32>
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

// -----

// A maximum of partial sums is not the partial of a maximum.
func.func @max_of_partials(%w1: tensor<?x4xf32> {gnn.param = "w1", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %m = gnn.apply_edge %g (%xs) params(%w1) : (!gnn.etensor<?xf32>) params(tensor<?x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<?xf32>, %w: tensor<?x4xf32>):
    %t0 = gnn.linear %a, %w : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  // expected-error @+1 {{'gnn.gather' op aggregates partial sums over the feature columns with 'max', which does not add up over the processes}}
  %agg = gnn.gather max %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %agg, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %agg : f32, !gnn.vtensor<4xf32>
}
