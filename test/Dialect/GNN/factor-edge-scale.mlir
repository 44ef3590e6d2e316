// RUN: gnn-opt %s -split-input-file --gnn-factor-edge-scale -verify-diagnostics | FileCheck %s

// GCN's symmetric normalisation, as the frontend writes it: the per-edge
// rsqrt(d_out[src] * d_in[dst]) splits into rsqrt(max(d_out, 1)) on the
// rows and rsqrt(max(d_in, 1)) on the sums; the normalisation stage and the
// degree scatters go, and the aggregation reads plain scattered rows.

// CHECK-LABEL: func.func @gcn_both
// CHECK-DAG:     %[[DIN:.*]] = gnn.degree %[[G:.*]] in
// CHECK-DAG:     %[[DOUT:.*]] = gnn.degree %{{.*}} out
// CHECK-NOT:     gnn.apply_edge
// CHECK:         %[[PRE:.*]] = gnn.apply_vertex %{{.*}}(%[[X:.*]], %[[DOUT]]) : (!gnn.vtensor<16xf32>, !gnn.vtensor<1xf32>) -> !gnn.vtensor<16xf32> {
// CHECK-NEXT:    ^bb0(%[[R:.*]]: tensor<16xf32>, %[[D:.*]]: tensor<1xf32>):
// CHECK-NEXT:      %[[ONE:.*]] = gnn.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK-NEXT:      %[[S:.*]] = gnn.sub %[[D]], %[[ONE]]
// CHECK-NEXT:      %[[P:.*]] = gnn.relu %[[S]]
// CHECK-NEXT:      %[[C:.*]] = gnn.add %[[P]], %[[ONE]]
// CHECK-NEXT:      %[[F:.*]] = gnn.rsqrt %[[C]]
// CHECK-NEXT:      %[[Y:.*]] = gnn.mul %[[R]], %[[F]] : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
// CHECK-NEXT:      gnn.yield %[[Y]]
// CHECK:         %[[E:.*]] = gnn.scatter %{{.*}}, %[[PRE]] from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
// CHECK-NEXT:    %[[A:.*]] = gnn.gather sum %{{.*}}, %[[E]] to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
// CHECK-NEXT:    %[[POST:.*]] = gnn.apply_vertex %{{.*}}(%[[A]], %[[DIN]])
// CHECK:           gnn.rsqrt
// CHECK:           gnn.mul
// CHECK:         return %[[POST]]
func.func @gcn_both(%x: !gnn.vtensor<16xf32>) -> !gnn.vtensor<16xf32> {
  %g = gnn.graph : !gnn.graph
  %din = gnn.degree %g in : !gnn.vtensor<1xf32>
  %dout = gnn.degree %g out : !gnn.vtensor<1xf32>
  %s = gnn.scatter %g, %dout from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %r = gnn.scatter %g, %din from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %norm = gnn.apply_edge %g (%s, %r) : (!gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%a: tensor<1xf32>, %b: tensor<1xf32>):
    %t0 = gnn.mul %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t1 = gnn.rsqrt %t0 : tensor<1xf32>
    gnn.yield %t1 : tensor<1xf32>
  }
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
  %m = gnn.apply_edge %g (%xs, %norm) : (!gnn.etensor<16xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<16xf32> {
  ^bb0(%row: tensor<16xf32>, %c: tensor<1xf32>):
    %t = gnn.mul %row, %c : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
    gnn.yield %t : tensor<16xf32>
  }
  // expected-remark @+1 {{edge scale factored: a source-side factor on the rows, a destination-side factor on the aggregate; no per-edge scale left}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
  return %a : !gnn.vtensor<16xf32>
}

// -----

// The backward direction (a gather to src, the destination's rows) with a
// mean and the scale inline in the stage, its factor only on the
// neighbour's side: 2 / d_in[dst] = 2 * (1 / max(d_in, 1)) on the rows, no
// post-scale.

// CHECK-LABEL: func.func @to_src_mean
// CHECK:         %[[DIN:.*]] = gnn.degree %{{.*}} in
// CHECK:         %[[PRE:.*]] = gnn.apply_vertex %{{.*}}(%{{.*}}, %[[DIN]])
// CHECK:           gnn.constant dense<2.000000e+00>
// CHECK:           gnn.div
// CHECK:         %[[E:.*]] = gnn.scatter %{{.*}}, %[[PRE]] from dst
// CHECK-NEXT:    %[[A:.*]] = gnn.gather mean %{{.*}}, %[[E]] to src
// CHECK-NEXT:    return %[[A]]
func.func @to_src_mean(%x: !gnn.vtensor<8xf32>) -> !gnn.vtensor<8xf32> {
  %g = gnn.graph : !gnn.graph
  %din = gnn.degree %g in : !gnn.vtensor<1xf32>
  %r = gnn.scatter %g, %din from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %xs = gnn.scatter %g, %x from dst : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %m = gnn.apply_edge %g (%r, %xs) : (!gnn.etensor<1xf32>, !gnn.etensor<8xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%d: tensor<1xf32>, %row: tensor<8xf32>):
    %two = gnn.constant dense<2.0> : tensor<1xf32>
    %c = gnn.div %two, %d : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t = gnn.mul %c, %row : (tensor<1xf32>, tensor<8xf32>) -> tensor<8xf32>
    gnn.yield %t : tensor<8xf32>
  }
  // expected-remark @+1 {{edge scale factored: a destination-side factor on the rows, no source-side factor on the aggregate}}
  %a = gnn.gather mean %g, %m to src : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  return %a : !gnn.vtensor<8xf32>
}

// -----

// A product of arbitrary per-vertex scalars needs no positivity: read as
// they are (no clamp), one factor per side.

// CHECK-LABEL: func.func @product
// CHECK:         gnn.apply_vertex %{{.*}}(%{{.*}}, %[[U:.*]]) : (!gnn.vtensor<4xf32>, !gnn.vtensor<1xf32>)
// CHECK-NEXT:    ^bb0(%[[R:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<1xf32>):
// CHECK-NEXT:      %[[Y:.*]] = gnn.mul %[[R]], %[[S]]
// CHECK-NEXT:      gnn.yield %[[Y]]
// CHECK:         gnn.gather sum
// CHECK:         gnn.apply_vertex
// CHECK-NOT:       gnn.relu
// CHECK:           gnn.mul
func.func @product(%x: !gnn.vtensor<4xf32>, %u: !gnn.vtensor<1xf32>, %v: !gnn.vtensor<1xf32>) -> !gnn.vtensor<4xf32> {
  %g = gnn.graph : !gnn.graph
  %su = gnn.scatter %g, %u from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %sv = gnn.scatter %g, %v from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%xs, %su, %sv) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%row: tensor<4xf32>, %a: tensor<1xf32>, %b: tensor<1xf32>):
    %c = gnn.mul %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t = gnn.mul %row, %c : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  // expected-remark @+1 {{edge scale factored}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a : !gnn.vtensor<4xf32>
}

// -----

// Refused: the root of a product of arbitrary scalars (both could be
// negative with a positive product).

// CHECK-LABEL: func.func @root_of_unknown_sign
// CHECK:         gnn.apply_edge
// CHECK:         gnn.gather sum
func.func @root_of_unknown_sign(%x: !gnn.vtensor<4xf32>, %u: !gnn.vtensor<1xf32>, %v: !gnn.vtensor<1xf32>) -> !gnn.vtensor<4xf32> {
  %g = gnn.graph : !gnn.graph
  %su = gnn.scatter %g, %u from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %sv = gnn.scatter %g, %v from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%xs, %su, %sv) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%row: tensor<4xf32>, %a: tensor<1xf32>, %b: tensor<1xf32>):
    %c = gnn.mul %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %r = gnn.rsqrt %c : tensor<1xf32>
    %t = gnn.mul %row, %r : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  // expected-remark @+1 {{edge scale not factored: it takes the square root of a value not known to be positive on edges}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a : !gnn.vtensor<4xf32>
}

// -----

// Refused: the degree of the other end (the in-degree read at the source
// can be 0 on an edge), divided by.

// CHECK-LABEL: func.func @wrong_end_degree
// CHECK:         gnn.apply_edge
func.func @wrong_end_degree(%x: !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  %g = gnn.graph : !gnn.graph
  %din = gnn.degree %g in : !gnn.vtensor<1xf32>
  %s = gnn.scatter %g, %din from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%xs, %s) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%row: tensor<4xf32>, %d: tensor<1xf32>):
    %one = gnn.constant dense<1.0> : tensor<1xf32>
    %c = gnn.div %one, %d : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t = gnn.mul %row, %c : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  // expected-remark @+1 {{edge scale not factored: it divides by a value not known to be positive on edges}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a : !gnn.vtensor<4xf32>
}

// -----

// Refused: edge data, a parameter, an op that does not factor.

// CHECK-LABEL: func.func @edge_data
// CHECK:         gnn.apply_edge
func.func @edge_data(%x: !gnn.vtensor<4xf32>, %w: !gnn.etensor<1xf32>) -> !gnn.vtensor<4xf32> {
  %g = gnn.graph : !gnn.graph
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%xs, %w) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%row: tensor<4xf32>, %c: tensor<1xf32>):
    %t = gnn.mul %row, %c : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  // expected-remark @+1 {{edge scale not factored: it depends on edge data}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a : !gnn.vtensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @parameter
// CHECK:         gnn.apply_edge
func.func @parameter(%x: !gnn.vtensor<4xf32>, %p: tensor<1xf32>) -> !gnn.vtensor<4xf32> {
  %g = gnn.graph : !gnn.graph
  %dout = gnn.degree %g out : !gnn.vtensor<1xf32>
  %s = gnn.scatter %g, %dout from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %n = gnn.apply_edge %g (%s) params(%p) : (!gnn.etensor<1xf32>) params(tensor<1xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%d: tensor<1xf32>, %pp: tensor<1xf32>):
    %c = gnn.mul %d, %pp : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    gnn.yield %c : tensor<1xf32>
  }
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%xs, %n) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%row: tensor<4xf32>, %c: tensor<1xf32>):
    %t = gnn.mul %row, %c : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  // expected-remark @+1 {{edge scale not factored: it depends on a parameter}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a : !gnn.vtensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @exp_scale
// CHECK:         gnn.apply_edge
func.func @exp_scale(%x: !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  %g = gnn.graph : !gnn.graph
  %dout = gnn.degree %g out : !gnn.vtensor<1xf32>
  %s = gnn.scatter %g, %dout from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%xs, %s) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%row: tensor<4xf32>, %d: tensor<1xf32>):
    %c = gnn.exp %d : tensor<1xf32>
    %t = gnn.mul %row, %c : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  // expected-remark @+1 {{edge scale not factored: it computes 'gnn.exp'}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a : !gnn.vtensor<4xf32>
}

// -----

// Not matched (no remark): a max gather, a row scaled by a row.

// CHECK-LABEL: func.func @not_matched
// CHECK:         gnn.gather max
// CHECK:         gnn.gather sum
func.func @not_matched(%x: !gnn.vtensor<4xf32>, %y: !gnn.vtensor<4xf32>) -> (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %dout = gnn.degree %g out : !gnn.vtensor<1xf32>
  %s = gnn.scatter %g, %dout from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %ys = gnn.scatter %g, %y from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%xs, %s) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%row: tensor<4xf32>, %d: tensor<1xf32>):
    %t = gnn.mul %row, %d : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %a = gnn.gather max %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %m2 = gnn.apply_edge %g (%xs, %ys) : (!gnn.etensor<4xf32>, !gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%r1: tensor<4xf32>, %r2: tensor<4xf32>):
    %t = gnn.mul %r1, %r2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %b = gnn.gather sum %g, %m2 to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a, %b : !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>
}
