// GCN with a dropout of its first layer's messages (an edge stage),
// for dropout-keys.mlir; otherwise examples/models/gcn.mlir.
module {
  func.func @gcn(
      %conv1_weight: tensor<?x16xf32> {gnn.param = "conv1.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %conv1_bias: tensor<16xf32> {gnn.param = "conv1.bias", gnn.init = #gnn.init<zeros>},
      %conv2_weight: tensor<16x?xf32> {gnn.param = "conv2.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]},
      %conv2_bias: tensor<?xf32> {gnn.param = "conv2.bias", gnn.init = #gnn.init<zeros>, gnn.dims = ["classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %din = gnn.degree %g in : !gnn.vtensor<1xf32>
    %dout = gnn.degree %g out : !gnn.vtensor<1xf32>
    %s = gnn.scatter %g, %dout from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
    %r = gnn.scatter %g, %din from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
    %norm = gnn.apply_edge %g (%s, %r) : (!gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<1xf32> {
    ^bb0(%src: tensor<1xf32>, %dst: tensor<1xf32>):
      %t0 = gnn.mul %src, %dst : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
      %t1 = gnn.rsqrt %t0 : tensor<1xf32>
      gnn.yield %t1 : tensor<1xf32>
    }
    %h = gnn.apply_vertex %g (%x) : (!gnn.vtensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%x_1: tensor<?xf32>):
      %t0 = gnn.dropout %x_1 {rate = 0.5 : f64} : tensor<?xf32>
      gnn.yield %t0 : tensor<?xf32>
    }
    %s1 = gnn.scatter %g, %h from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %m = gnn.apply_edge %g (%s1, %norm) : (!gnn.etensor<?xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<?xf32> {
    ^bb0(%src: tensor<?xf32>, %data: tensor<1xf32>):
      %t0 = gnn.mul %src, %data : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
      %t1 = gnn.dropout %t0 {rate = 0.5 : f64} : tensor<?xf32>
      gnn.yield %t1 : tensor<?xf32>
    }
    %a = gnn.gather sum %g, %m to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
    %h1 = gnn.apply_vertex %g (%a) params(%conv1_weight, %conv1_bias) : (!gnn.vtensor<?xf32>) params(tensor<?x16xf32>, tensor<16xf32>) -> !gnn.vtensor<16xf32> {
    ^bb0(%acc: tensor<?xf32>, %weight: tensor<?x16xf32>, %bias: tensor<16xf32>):
      %t0 = gnn.linear %acc, %weight : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
      %t1 = gnn.add %t0, %bias : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %t2 = gnn.relu %t1 : tensor<16xf32>
      %t3 = gnn.dropout %t2 {rate = 0.5 : f64} : tensor<16xf32>
      gnn.yield %t3 : tensor<16xf32>
    }
    %s2 = gnn.scatter %g, %h1 from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
    %m1 = gnn.apply_edge %g (%s2, %norm) : (!gnn.etensor<16xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<16xf32> {
    ^bb0(%src: tensor<16xf32>, %data: tensor<1xf32>):
      %t0 = gnn.mul %src, %data : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
      gnn.yield %t0 : tensor<16xf32>
    }
    %a1 = gnn.gather sum %g, %m1 to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
    %logits = gnn.apply_vertex %g (%a1) params(%conv2_weight, %conv2_bias) : (!gnn.vtensor<16xf32>) params(tensor<16x?xf32>, tensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%acc: tensor<16xf32>, %weight: tensor<16x?xf32>, %bias: tensor<?xf32>):
      %t0 = gnn.linear %acc, %weight : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
      %t1 = gnn.add %t0, %bias : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      gnn.yield %t1 : tensor<?xf32>
    }
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %train_mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %loss = gnn.softmax_cross_entropy %logits, %labels, %train_mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
