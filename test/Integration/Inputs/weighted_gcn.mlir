// A one-layer GCN normalised by weighted degrees (PyG's gcn_norm with edge
// weights): each vertex's degree sums its in-edges' "weight", so a source's
// normalisation reads its own in-edges, one hop beyond the aggregation's:
// the model reads 2 hops (a sampled batch needs the sources' in-edges).
module {
  func.func @wgcn(
      %w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "classes"]},
      %b: tensor<?xf32> {gnn.param = "b", gnn.init = #gnn.init<zeros>, gnn.dims = ["classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %ew = gnn.input %g "weight" : !gnn.etensor<1xf32>
    %deg = gnn.gather sum %g, %ew to dst : !gnn.etensor<1xf32> -> !gnn.vtensor<1xf32>
    %dinv = gnn.apply_vertex %g (%deg) : (!gnn.vtensor<1xf32>) -> !gnn.vtensor<1xf32> {
    ^bb0(%d: tensor<1xf32>):
      %r = gnn.rsqrt %d : tensor<1xf32>
      gnn.yield %r : tensor<1xf32>
    }
    %sd = gnn.scatter %g, %dinv from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
    %dd = gnn.scatter %g, %dinv from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
    %sx = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %m = gnn.apply_edge %g (%sx, %sd, %ew, %dd) : (!gnn.etensor<?xf32>, !gnn.etensor<1xf32>, !gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<?xf32> {
    ^bb0(%v: tensor<?xf32>, %a: tensor<1xf32>, %e: tensor<1xf32>, %c: tensor<1xf32>):
      %t0 = gnn.mul %a, %e : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
      %t1 = gnn.mul %t0, %c : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
      %t2 = gnn.mul %v, %t1 : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
      gnn.yield %t2 : tensor<?xf32>
    }
    %agg = gnn.gather sum %g, %m to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
    %logits = gnn.apply_vertex %g (%agg) params(%w, %b) : (!gnn.vtensor<?xf32>) params(tensor<?x?xf32>, tensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%h: tensor<?xf32>, %wv: tensor<?x?xf32>, %bv: tensor<?xf32>):
      %t0 = gnn.linear %h, %wv : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
      %t1 = gnn.add %t0, %bv : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      gnn.yield %t1 : tensor<?xf32>
    }
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %loss = gnn.softmax_cross_entropy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
