// CommNet (NeuGraph Fig. 10): h' = ReLU(W_H h + W_C sum_{u->v} h_u); the
// ApplyEdge stage is a pass-through. Two layers, F -> 16 -> C.
module {
  func.func @commnet(
      %wh1: tensor<?x16xf32> {gnn.param = "conv1.self.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %wc1: tensor<?x16xf32> {gnn.param = "conv1.comm.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %wh2: tensor<16x?xf32> {gnn.param = "conv2.self.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]},
      %wc2: tensor<16x?xf32> {gnn.param = "conv2.comm.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>

    %s1 = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %p1 = gnn.apply_edge %g (%s1) : (!gnn.etensor<?xf32>) -> !gnn.etensor<?xf32> {
    ^bb0(%src: tensor<?xf32>):
      gnn.yield %src : tensor<?xf32>
    }
    %a1 = gnn.gather sum %g, %p1 to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
    %h1 = gnn.apply_vertex %g (%x, %a1) params(%wh1, %wc1) : (!gnn.vtensor<?xf32>, !gnn.vtensor<?xf32>) params(tensor<?x16xf32>, tensor<?x16xf32>) -> !gnn.vtensor<16xf32> {
    ^bb0(%v: tensor<?xf32>, %acc: tensor<?xf32>, %wh: tensor<?x16xf32>, %wc: tensor<?x16xf32>):
      %t0 = gnn.linear %v, %wh : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
      %t1 = gnn.linear %acc, %wc : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
      %t = gnn.add %t0, %t1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r = gnn.relu %t : tensor<16xf32>
      gnn.yield %r : tensor<16xf32>
    }

    %s2 = gnn.scatter %g, %h1 from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
    %p2 = gnn.apply_edge %g (%s2) : (!gnn.etensor<16xf32>) -> !gnn.etensor<16xf32> {
    ^bb0(%src: tensor<16xf32>):
      gnn.yield %src : tensor<16xf32>
    }
    %a2 = gnn.gather sum %g, %p2 to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
    %logits = gnn.apply_vertex %g (%h1, %a2) params(%wh2, %wc2) : (!gnn.vtensor<16xf32>, !gnn.vtensor<16xf32>) params(tensor<16x?xf32>, tensor<16x?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%v: tensor<16xf32>, %acc: tensor<16xf32>, %wh: tensor<16x?xf32>, %wc: tensor<16x?xf32>):
      %t0 = gnn.linear %v, %wh : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
      %t1 = gnn.linear %acc, %wc : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
      %t = gnn.add %t0, %t1 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      gnn.yield %t : tensor<?xf32>
    }

    %loss = gnn.softmax_cross_entropy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
