// GCN (Kipf & Welling): h' = act(Â h W + b), Â = D^-1/2 A D^-1/2 computed
// from the graph's degrees. Two layers, F -> 16 -> C, dropout 0.5.
module {
  func.func @gcn(
      %w1: tensor<?x16xf32> {gnn.param = "conv1.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %b1: tensor<16xf32> {gnn.param = "conv1.bias", gnn.init = #gnn.init<zeros>},
      %w2: tensor<16x?xf32> {gnn.param = "conv2.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]},
      %b2: tensor<?xf32> {gnn.param = "conv2.bias", gnn.init = #gnn.init<zeros>, gnn.dims = ["classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>

    // Edge normalisation n_uv = 1 / sqrt(d_out(u) * d_in(v)).
    %din = gnn.degree %g in : !gnn.vtensor<1xf32>
    %dout = gnn.degree %g out : !gnn.vtensor<1xf32>
    %si = gnn.scatter %g, %din from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
    %so = gnn.scatter %g, %dout from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
    %norm = gnn.apply_edge %g (%so, %si) : (!gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<1xf32> {
    ^bb0(%du: tensor<1xf32>, %dv: tensor<1xf32>):
      %p = gnn.mul %du, %dv : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
      %r = gnn.rsqrt %p : tensor<1xf32>
      gnn.yield %r : tensor<1xf32>
    }

    // Layer 1.
    %x0 = gnn.apply_vertex %g (%x) : (!gnn.vtensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%v: tensor<?xf32>):
      %d = gnn.dropout %v {rate = 5.000000e-01 : f64} : tensor<?xf32>
      gnn.yield %d : tensor<?xf32>
    }
    %s1 = gnn.scatter %g, %x0 from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %m1 = gnn.apply_edge %g (%s1, %norm) : (!gnn.etensor<?xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<?xf32> {
    ^bb0(%src: tensor<?xf32>, %n: tensor<1xf32>):
      %r = gnn.mul %src, %n : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
      gnn.yield %r : tensor<?xf32>
    }
    %a1 = gnn.gather sum %g, %m1 to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
    %h1 = gnn.apply_vertex %g (%a1) params(%w1, %b1) : (!gnn.vtensor<?xf32>) params(tensor<?x16xf32>, tensor<16xf32>) -> !gnn.vtensor<16xf32> {
    ^bb0(%acc: tensor<?xf32>, %w: tensor<?x16xf32>, %b: tensor<16xf32>):
      %t = gnn.linear %acc, %w : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
      %tb = gnn.add %t, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r = gnn.relu %tb : tensor<16xf32>
      %d = gnn.dropout %r {rate = 5.000000e-01 : f64} : tensor<16xf32>
      gnn.yield %d : tensor<16xf32>
    }

    // Layer 2.
    %s2 = gnn.scatter %g, %h1 from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
    %m2 = gnn.apply_edge %g (%s2, %norm) : (!gnn.etensor<16xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<16xf32> {
    ^bb0(%src: tensor<16xf32>, %n: tensor<1xf32>):
      %r = gnn.mul %src, %n : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
      gnn.yield %r : tensor<16xf32>
    }
    %a2 = gnn.gather sum %g, %m2 to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
    %logits = gnn.apply_vertex %g (%a2) params(%w2, %b2) : (!gnn.vtensor<16xf32>) params(tensor<16x?xf32>, tensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%acc: tensor<16xf32>, %w: tensor<16x?xf32>, %b: tensor<?xf32>):
      %t = gnn.linear %acc, %w : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
      %tb = gnn.add %t, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      gnn.yield %tb : tensor<?xf32>
    }

    %loss = gnn.softmax_cross_entropy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
