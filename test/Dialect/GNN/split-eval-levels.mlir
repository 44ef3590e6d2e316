// RUN: gnn-opt %s -split-input-file --gnn-split-eval-levels -verify-diagnostics | FileCheck %s

// Two levels. Level 1: h0 from the features (hop 0) and h1 = a sum of h0
// over the in-edges scaled by the in-degree. Level 2 reads h1 at the
// sources (an edge op, recomputed there) and h0 at the vertex (a skip
// connection): both are cuts, numbered in the evaluation's order. The
// degree, the labels and the mask do not depend on the features: each
// level that reads them recomputes them, and the edge scale from the
// destinations' degree is recomputed in level 2 too.

// CHECK-LABEL: func.func @gnn_eval(
// CHECK:         gnn.apply_vertex %{{.*}}(%{{.*}}) params(%{{.*}}) {gnn.cuts = array<i64: 0>}
// CHECK:         gnn.apply_vertex %{{.*}}(%{{.*}}, %{{.*}}) {gnn.cuts = array<i64: 1>}
// CHECK-LABEL: func.func @gnn_eval_level_1(
// CHECK-NOT:     gnn.cuts
// CHECK-SAME:    %[[W1:[^:]*]]: tensor<8x4xf32> {gnn.param = "w1"}, %{{.*}}: tensor<8x3xf32> {gnn.param = "w2"})
// CHECK-SAME:    -> (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>)
// CHECK-SAME:    attributes {gnn.eval_level = 1 : i64, gnn.level_outputs = array<i64: 0, 1>}
// CHECK:         %[[G:.*]] = gnn.graph
// CHECK:         %[[X:.*]] = gnn.input %[[G]] "features"
// CHECK:         %[[H0:.*]] = gnn.apply_vertex %[[G]](%[[X]]) params(%[[W1]])
// CHECK:         %[[S:.*]] = gnn.scatter %[[G]], %[[H0]] from src
// CHECK:         %[[A:.*]] = gnn.gather sum %[[G]], %[[S]] to dst
// CHECK:         %[[D:.*]] = gnn.degree %[[G]] in
// CHECK:         %[[H1:.*]] = gnn.apply_vertex %[[G]](%[[A]], %[[D]])
// CHECK-NOT:     softmax_cross_entropy
// CHECK:         return %[[H0]], %[[H1]] : !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>
// CHECK-LABEL: func.func @gnn_eval_level_2(
// CHECK-NOT:     gnn.cuts
// CHECK-SAME:    %{{.*}}: tensor<8x4xf32> {gnn.param = "w1"}, %[[W2:[^:]*]]: tensor<8x3xf32> {gnn.param = "w2"})
// CHECK-SAME:    -> (f32, !gnn.vtensor<3xf32>) attributes {gnn.eval_level = 2 : i64}
// CHECK-NOT:     "features"
// CHECK:         %[[G2:.*]] = gnn.graph
// CHECK:         %[[C1:.*]] = gnn.input %[[G2]] "level.1" : !gnn.vtensor<4xf32>
// CHECK:         %[[S2:.*]] = gnn.scatter %[[G2]], %[[C1]] from src
// CHECK:         %[[D2:.*]] = gnn.degree %[[G2]] in
// CHECK:         %[[R2:.*]] = gnn.scatter %[[G2]], %[[D2]] from dst
// CHECK:         %[[M2:.*]] = gnn.apply_edge %[[G2]](%[[S2]], %[[R2]])
// CHECK:         %[[A2:.*]] = gnn.gather sum %[[G2]], %[[M2]] to dst
// CHECK:         %[[C0:.*]] = gnn.input %[[G2]] "level.0" : !gnn.vtensor<4xf32>
// CHECK:         %[[O:.*]] = gnn.apply_vertex %[[G2]](%[[A2]], %[[C0]]) params(%[[W2]])
// CHECK:         %[[L:.*]] = gnn.input %[[G2]] "labels"
// CHECK:         %[[M:.*]] = gnn.input %[[G2]] "train_mask"
// CHECK:         %[[LOSS:.*]] = gnn.softmax_cross_entropy %[[O]], %[[L]], %[[M]]
// CHECK:         return %[[LOSS]], %[[O]] : f32, !gnn.vtensor<3xf32>
// CHECK-NOT:   func.func @gnn_eval_level_3
module {
// expected-remark @+1 {{layer-wise evaluation: 2 levels, 2 vertex values held between them}}
func.func @gnn_eval(%w1: tensor<8x4xf32> {gnn.param = "w1"}, %w2: tensor<8x3xf32> {gnn.param = "w2"}) -> (f32, !gnn.vtensor<3xf32>) {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<8xf32>
  %h0 = gnn.apply_vertex %g (%x) params(%w1) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<8xf32>, %w: tensor<8x4xf32>):
    %y = gnn.linear %r, %w : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %y : tensor<4xf32>
  }
  %s = gnn.scatter %g, %h0 from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a = gnn.gather sum %g, %s to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %d = gnn.degree %g in : !gnn.vtensor<1xf32>
  %h1 = gnn.apply_vertex %g (%a, %d) : (!gnn.vtensor<4xf32>, !gnn.vtensor<1xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<4xf32>, %k: tensor<1xf32>):
    %y = gnn.mul %r, %k : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    %z = gnn.relu %y : tensor<4xf32>
    gnn.yield %z : tensor<4xf32>
  }
  %s2 = gnn.scatter %g, %h1 from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %r2 = gnn.scatter %g, %d from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %m2 = gnn.apply_edge %g (%s2, %r2) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%e: tensor<4xf32>, %k: tensor<1xf32>):
    %y = gnn.mul %e, %k : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %y : tensor<4xf32>
  }
  %a2 = gnn.gather sum %g, %m2 to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%a2, %h0) params(%w2) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) params(tensor<8x3xf32>) -> !gnn.vtensor<3xf32> {
  ^bb0(%r: tensor<4xf32>, %k: tensor<4xf32>, %w: tensor<8x3xf32>):
    %c = gnn.concat %r, %k : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
    %y = gnn.linear %c, %w : (tensor<8xf32>, tensor<8x3xf32>) -> tensor<3xf32>
    gnn.yield %y : tensor<3xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<3xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<3xf32>
}
}

// -----

// A fused gather's source inputs are one hop away, its destination inputs
// at the vertex: three levels, each one cut.

// CHECK-LABEL: func.func @gnn_eval_level_1(
// CHECK-SAME:    gnn.level_outputs = array<i64: 0>
// CHECK:         gnn.fused_gather sum
// CHECK-LABEL: func.func @gnn_eval_level_2(
// CHECK-SAME:    gnn.level_outputs = array<i64: 1>
// CHECK:         %[[C:.*]] = gnn.input %{{.*}} "level.0" : !gnn.vtensor<4xf32>
// CHECK:         gnn.fused_gather sum %{{.*}} src(%[[C]] : !gnn.vtensor<4xf32>) dst(%[[C]] : !gnn.vtensor<4xf32>)
// CHECK-LABEL: func.func @gnn_eval_level_3(
// CHECK:         gnn.input %{{.*}} "level.1" : !gnn.vtensor<4xf32>
module {
// expected-remark @+1 {{layer-wise evaluation: 3 levels, 2 vertex values held between them}}
func.func @gnn_eval() -> (f32, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.fused_gather sum %g src(%x : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<4xf32>):
    gnn.yield %r : tensor<4xf32>
  }
  %b = gnn.fused_gather sum %g src(%a : !gnn.vtensor<4xf32>) dst(%a : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<4xf32>, %q: tensor<4xf32>):
    %y = gnn.mul %r, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %y : tensor<4xf32>
  }
  %c = gnn.fused_gather sum %g src(%b : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<4xf32>):
    gnn.yield %r : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %c, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %c : f32, !gnn.vtensor<4xf32>
}
}

// -----

// An aggregation to the sources: a block holds its destinations' in-edges
// only. Not split.

// CHECK-LABEL: func.func @gnn_eval(
// CHECK-NOT:   gnn_eval_level
module {
func.func @gnn_eval() -> (f32, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %s = gnn.scatter %g, %x from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  // expected-remark @+1 {{layer-wise evaluation: not split: it aggregates to the sources, whose out-edges a level's block does not hold}}
  %a = gnn.gather sum %g, %s to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<4xf32>
}
}

// -----

// A sum over every vertex: a level's batch does not hold them. Not split.

// CHECK-LABEL: func.func @gnn_eval(
// CHECK-NOT:   gnn_eval_level
module {
func.func @gnn_eval() -> (f32, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  // expected-remark @+1 {{layer-wise evaluation: not split: it reduces over all vertices, which a level's batch does not hold}}
  %t = gnn.sum_rows %x : !gnn.vtensor<4xf32> -> tensor<4xf32>
  %o = gnn.apply_vertex %g (%x) params(%t) : (!gnn.vtensor<4xf32>) params(tensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<4xf32>, %p: tensor<4xf32>):
    %y = gnn.mul %r, %p : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %y : tensor<4xf32>
  }
  %a = gnn.fused_gather sum %g src(%o : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<4xf32>):
    gnn.yield %r : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<4xf32>
}
}

// -----

// No neighbour read: every vertex's logits are its own; nothing to split.

// CHECK-LABEL: func.func @gnn_eval(
// CHECK-NOT:   gnn_eval_level
module {
// expected-remark @+1 {{layer-wise evaluation: not split (no vertex value depends on a neighbour)}}
func.func @gnn_eval() -> (f32, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %x, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %x : f32, !gnn.vtensor<4xf32>
}
}

// -----

// expected-error @+1 {{--gnn-split-eval-levels expects @gnn_eval; run --gnn-autodiff first}}
module {
func.func @m() {
  return
}
}

// -----

// expected-error @+1 {{the module has @gnn_eval_level_1 already (the pass ran twice)}}
module {
func.func @gnn_eval() -> (f32, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %x, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %x : f32, !gnn.vtensor<4xf32>
}
func.func @gnn_eval_level_1() attributes {gnn.eval_level = 1 : i64} {
  return
}
}

// -----

// The verifier: a cut is read only in a level's function, as f32 rows.

func.func @not_a_level() -> !gnn.vtensor<4xf32> {
  %g = gnn.graph : !gnn.graph
  // expected-error @+1 {{input 'level.0' is a cut of a layer-wise evaluation, read only in a function with gnn.eval_level (--gnn-split-eval-levels)}}
  %x = gnn.input %g "level.0" : !gnn.vtensor<4xf32>
  return %x : !gnn.vtensor<4xf32>
}

// -----

func.func @integer_cut() attributes {gnn.eval_level = 2 : i64} {
  %g = gnn.graph : !gnn.graph
  // expected-error @+1 {{input 'level.3' must be a vertex tensor of f32 but got '!gnn.vtensor<i64>'}}
  %x = gnn.input %g "level.3" : !gnn.vtensor<i64>
  return
}

// -----

// expected-error @+1 {{'gnn.level_outputs' must be an array<i64> of one cut number (0 or more) per result}}
func.func @outputs_per_result(%x: !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> attributes {gnn.eval_level = 1 : i64, gnn.level_outputs = array<i64: 0, 1>} {
  return %x : !gnn.vtensor<4xf32>
}

// -----

// expected-error @+1 {{'gnn.level_outputs' is only valid on a function with 'gnn.eval_level'}}
func.func @outputs_without_level(%x: !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> attributes {gnn.level_outputs = array<i64: 0>} {
  return %x : !gnn.vtensor<4xf32>
}

// -----

// expected-error @+1 {{'gnn.eval_level' must be an i64 of at least 1}}
func.func @level_zero() attributes {gnn.eval_level = 0 : i64} {
  return
}

// -----

func.func @cuts_per_result(%x: !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  // expected-error @+1 {{'gnn.cuts' must be an array<i64> of one cut number (-1: none) per result}}
  %a = gnn.fused_gather sum %g src(%x : !gnn.vtensor<4xf32>) to dst {gnn.cuts = array<i64: 0, 1>} : !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<4xf32>):
    gnn.yield %r : tensor<4xf32>
  }
  return
}

// -----

// A degree from edge weights (PyG's gcn_norm) does not depend on the
// features, but an aggregation is right at its block's destinations only:
// read at the sources it is level 1's: the rows it normalises are level
// 1's, a cut of level 2 (not recomputed there from the features).

// CHECK-LABEL: func.func @gnn_eval_level_1(
// CHECK-SAME:    gnn.level_outputs = array<i64: 0>
// CHECK:         %[[W:.*]] = gnn.input %{{.*}} "weight"
// CHECK:         %[[DEG:.*]] = gnn.gather sum %{{.*}}, %[[W]] to dst
// CHECK:         %[[N:.*]] = gnn.apply_vertex %{{.*}}(%{{.*}}, %[[DEG]])
// CHECK:         return %[[N]]
// CHECK-LABEL: func.func @gnn_eval_level_2(
// CHECK-NOT:     "features"
// CHECK:         %[[CUT:.*]] = gnn.input %{{.*}} "level.0" : !gnn.vtensor<4xf32>
// CHECK:         gnn.scatter %{{.*}}, %[[CUT]] from src
module {
// expected-remark @+1 {{layer-wise evaluation: 2 levels, 1 vertex values held between them}}
func.func @gnn_eval() -> (f32, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %w = gnn.input %g "weight" : !gnn.etensor<1xf32>
  %deg = gnn.gather sum %g, %w to dst : !gnn.etensor<1xf32> -> !gnn.vtensor<1xf32>
  %n = gnn.apply_vertex %g (%x, %deg) : (!gnn.vtensor<4xf32>, !gnn.vtensor<1xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%r: tensor<4xf32>, %d: tensor<1xf32>):
    %s = gnn.rsqrt %d : tensor<1xf32>
    %y = gnn.mul %r, %s : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %y : tensor<4xf32>
  }
  %e = gnn.scatter %g, %n from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a = gnn.gather sum %g, %e to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<4xf32>
}
}
