// G-GCN (NeuGraph, eq. 1-2): for an edge v -> u,
//   eta_vu = sigmoid(W_H h_u + W_C h_v),  h_u' = ReLU(W sum_{v->u} eta_vu * h_v).
// Written per edge as in NeuGraph's Fig. 3; the hoisting pass moves W_H h_dst
// and W_C h_src to the vertices. Two layers, F -> 16 -> C.
module {
  func.func @ggcn(
      %wh1: tensor<?x?xf32> {gnn.param = "conv1.gate_dst.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "features"]},
      %wc1: tensor<?x?xf32> {gnn.param = "conv1.gate_src.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "features"]},
      %w1: tensor<?x16xf32> {gnn.param = "conv1.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %wh2: tensor<16x16xf32> {gnn.param = "conv2.gate_dst.weight", gnn.init = #gnn.init<glorot>},
      %wc2: tensor<16x16xf32> {gnn.param = "conv2.gate_src.weight", gnn.init = #gnn.init<glorot>},
      %w2: tensor<16x?xf32> {gnn.param = "conv2.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>

    %s1 = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %d1 = gnn.scatter %g, %x from dst : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %m1 = gnn.apply_edge %g (%s1, %d1) params(%wh1, %wc1) : (!gnn.etensor<?xf32>, !gnn.etensor<?xf32>) params(tensor<?x?xf32>, tensor<?x?xf32>) -> !gnn.etensor<?xf32> {
    ^bb0(%src: tensor<?xf32>, %dst: tensor<?xf32>, %wh: tensor<?x?xf32>, %wc: tensor<?x?xf32>):
      %a = gnn.linear %dst, %wh : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
      %b = gnn.linear %src, %wc : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
      %z = gnn.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      %eta = gnn.sigmoid %z : tensor<?xf32>
      %r = gnn.mul %eta, %src : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      gnn.yield %r : tensor<?xf32>
    }
    %a1 = gnn.gather sum %g, %m1 to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
    %h1 = gnn.apply_vertex %g (%a1) params(%w1) : (!gnn.vtensor<?xf32>) params(tensor<?x16xf32>) -> !gnn.vtensor<16xf32> {
    ^bb0(%acc: tensor<?xf32>, %w: tensor<?x16xf32>):
      %t = gnn.linear %acc, %w : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
      %r = gnn.relu %t : tensor<16xf32>
      %d = gnn.dropout %r {rate = 5.000000e-01 : f64} : tensor<16xf32>
      gnn.yield %d : tensor<16xf32>
    }

    %s2 = gnn.scatter %g, %h1 from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
    %d2 = gnn.scatter %g, %h1 from dst : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
    %m2 = gnn.apply_edge %g (%s2, %d2) params(%wh2, %wc2) : (!gnn.etensor<16xf32>, !gnn.etensor<16xf32>) params(tensor<16x16xf32>, tensor<16x16xf32>) -> !gnn.etensor<16xf32> {
    ^bb0(%src: tensor<16xf32>, %dst: tensor<16xf32>, %wh: tensor<16x16xf32>, %wc: tensor<16x16xf32>):
      %a = gnn.linear %dst, %wh : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %b = gnn.linear %src, %wc : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %z = gnn.add %a, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %eta = gnn.sigmoid %z : tensor<16xf32>
      %r = gnn.mul %eta, %src : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      gnn.yield %r : tensor<16xf32>
    }
    %a2 = gnn.gather sum %g, %m2 to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
    %logits = gnn.apply_vertex %g (%a2) params(%w2) : (!gnn.vtensor<16xf32>) params(tensor<16x?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%acc: tensor<16xf32>, %w: tensor<16x?xf32>):
      %t = gnn.linear %acc, %w : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
      gnn.yield %t : tensor<?xf32>
    }

    %loss = gnn.softmax_cross_entropy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
