// RUN: gnn-opt %s -split-input-file --gnn-partition-rows=replicate=2 -verify-diagnostics

// What replicated layers (--gnn-partition-rows replicate=k) cannot do is
// refused, naming the op.

// Levels beyond the model's: it reads no neighbour's rows, so there is one
// level to replicate (every op) and replicate=2 asks for more.
// expected-error @+1 {{the model has 0 level(s) of neighbour reads from the features: --gnn-partition-rows replicate=2 asks for more than 1}}
func.func @no_hop() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %d = gnn.scatter %g, %x from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a = gnn.gather sum %g, %d to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<4xf32>
}

// -----

// Edge data in a replicated layer: the runtime binds the own rows' edges'.
func.func @edge_data() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.input' op is edge data read by a replicated layer (--gnn-partition-rows replicate=2), which the runtime binds for the own rows' edges only: replicate fewer levels}}
  %ew = gnn.input %g "weight" : !gnn.etensor<1xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%s, %ew) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<1xf32>):
    %t = gnn.mul %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %s2 = gnn.scatter %g, %a from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a2 = gnn.gather sum %g, %s2 to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a2, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a2 : f32, !gnn.vtensor<4xf32>
}

// -----

// Nothing to replicate from.
// expected-error @+1 {{has no 'features' input, from which --gnn-partition-rows replicates layers}}
func.func @no_features() -> (f32, !gnn.vtensor<1xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %d = gnn.degree %g in : !gnn.vtensor<1xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %d, %labels, %mask : !gnn.vtensor<1xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %d : f32, !gnn.vtensor<1xf32>
}

// -----

// A suffix must start above the prefix: the rows are split in between.
// RUN: not gnn-opt %s -split-input-file --gnn-partition-rows="replicate=1 replicate-from=1" 2>&1 | FileCheck %s --check-prefix=OVERLAP
// OVERLAP: error: --gnn-partition-rows replicate-from=1 starts inside the 1 level(s) replicate= replicates: with the rows split in between, it must exceed them
// RUN: not gnn-opt %s -split-input-file --gnn-partition-rows=replicate-from=5 2>&1 | FileCheck %s --check-prefix=BEYOND
// BEYOND: error: the model has levels 0 to 1 of neighbour reads from the features: --gnn-partition-rows replicate-from=5 replicates none
// expected-remark @+1 {{row partitioning: 3 op(s) of the levels below 2 replicated on the whole graph (1 own-rows read(s)); 0 all-gather(s) in the forward, 0 reduce-scatter(s)}}
func.func @one_hop() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a = gnn.gather sum %g, %s to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<4xf32>
}
