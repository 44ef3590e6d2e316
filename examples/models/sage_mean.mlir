// GraphSAGE with the mean aggregator (Hamilton et al.; PyG SAGEConv):
// h' = act(W_self h + W_neigh mean_{u->v} h_u + b). Two layers, F -> 16 -> C.
module {
  func.func @sage_mean(
      %ws1: tensor<?x16xf32> {gnn.param = "conv1.root.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %wn1: tensor<?x16xf32> {gnn.param = "conv1.neigh.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %b1: tensor<16xf32> {gnn.param = "conv1.bias", gnn.init = #gnn.init<zeros>},
      %ws2: tensor<16x?xf32> {gnn.param = "conv2.root.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]},
      %wn2: tensor<16x?xf32> {gnn.param = "conv2.neigh.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]},
      %b2: tensor<?xf32> {gnn.param = "conv2.bias", gnn.init = #gnn.init<zeros>, gnn.dims = ["classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>

    %x0 = gnn.apply_vertex %g (%x) : (!gnn.vtensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%v: tensor<?xf32>):
      %d = gnn.dropout %v {rate = 5.000000e-01 : f64} : tensor<?xf32>
      gnn.yield %d : tensor<?xf32>
    }
    %s1 = gnn.scatter %g, %x0 from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %a1 = gnn.gather mean %g, %s1 to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
    %h1 = gnn.apply_vertex %g (%x0, %a1) params(%ws1, %wn1, %b1) : (!gnn.vtensor<?xf32>, !gnn.vtensor<?xf32>) params(tensor<?x16xf32>, tensor<?x16xf32>, tensor<16xf32>) -> !gnn.vtensor<16xf32> {
    ^bb0(%v: tensor<?xf32>, %acc: tensor<?xf32>, %ws: tensor<?x16xf32>, %wn: tensor<?x16xf32>, %b: tensor<16xf32>):
      %t0 = gnn.linear %v, %ws : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
      %t1 = gnn.linear %acc, %wn : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
      %t = gnn.add %t0, %t1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %tb = gnn.add %t, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r = gnn.relu %tb : tensor<16xf32>
      %d = gnn.dropout %r {rate = 5.000000e-01 : f64} : tensor<16xf32>
      gnn.yield %d : tensor<16xf32>
    }

    %s2 = gnn.scatter %g, %h1 from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
    %a2 = gnn.gather mean %g, %s2 to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
    %logits = gnn.apply_vertex %g (%h1, %a2) params(%ws2, %wn2, %b2) : (!gnn.vtensor<16xf32>, !gnn.vtensor<16xf32>) params(tensor<16x?xf32>, tensor<16x?xf32>, tensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%v: tensor<16xf32>, %acc: tensor<16xf32>, %ws: tensor<16x?xf32>, %wn: tensor<16x?xf32>, %b: tensor<?xf32>):
      %t0 = gnn.linear %v, %ws : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
      %t1 = gnn.linear %acc, %wn : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
      %t = gnn.add %t0, %t1 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      %tb = gnn.add %t, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      gnn.yield %tb : tensor<?xf32>
    }

    %loss = gnn.softmax_cross_entropy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
