// GAT (Velickovic et al.): multi-head attention with the edge softmax built
// from SAGA stages (gather max, scatter, exp, gather sum, scatter, divide).
// Layer 1: 4 heads x 8, ELU; layer 2: 1 head -> C. LeakyReLU slope 0.2.
module {
  func.func @gat(
      %w1: tensor<?x4x8xf32> {gnn.param = "conv1.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "", ""]},
      %as1: tensor<4x8xf32> {gnn.param = "conv1.att_src", gnn.init = #gnn.init<glorot>},
      %ad1: tensor<4x8xf32> {gnn.param = "conv1.att_dst", gnn.init = #gnn.init<glorot>},
      %b1: tensor<4x8xf32> {gnn.param = "conv1.bias", gnn.init = #gnn.init<zeros>},
      %w2: tensor<4x8x?xf32> {gnn.param = "conv2.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "", "classes"]},
      %as2: tensor<?xf32> {gnn.param = "conv2.att_src", gnn.init = #gnn.init<glorot>, gnn.dims = ["classes"]},
      %ad2: tensor<?xf32> {gnn.param = "conv2.att_dst", gnn.init = #gnn.init<glorot>, gnn.dims = ["classes"]},
      %b2: tensor<?xf32> {gnn.param = "conv2.bias", gnn.init = #gnn.init<zeros>, gnn.dims = ["classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>

    // Layer 1: project to 4 heads of 8.
    %hw = gnn.apply_vertex %g (%x) params(%w1) : (!gnn.vtensor<?xf32>) params(tensor<?x4x8xf32>) -> !gnn.vtensor<4x8xf32> {
    ^bb0(%v: tensor<?xf32>, %w: tensor<?x4x8xf32>):
      %d = gnn.dropout %v {rate = 5.000000e-01 : f64} : tensor<?xf32>
      %t = gnn.linear %d, %w : (tensor<?xf32>, tensor<?x4x8xf32>) -> tensor<4x8xf32>
      gnn.yield %t : tensor<4x8xf32>
    }
    %hs = gnn.scatter %g, %hw from src : !gnn.vtensor<4x8xf32> -> !gnn.etensor<4x8xf32>
    %hd = gnn.scatter %g, %hw from dst : !gnn.vtensor<4x8xf32> -> !gnn.etensor<4x8xf32>
    // Attention logits e_uv = leaky_relu(a_src . Wh_u + a_dst . Wh_v), per head.
    %e = gnn.apply_edge %g (%hs, %hd) params(%as1, %ad1) : (!gnn.etensor<4x8xf32>, !gnn.etensor<4x8xf32>) params(tensor<4x8xf32>, tensor<4x8xf32>) -> !gnn.etensor<4xf32> {
    ^bb0(%s: tensor<4x8xf32>, %d: tensor<4x8xf32>, %as: tensor<4x8xf32>, %ad: tensor<4x8xf32>):
      %l = gnn.row_dot %s, %as : tensor<4x8xf32> -> tensor<4xf32>
      %r = gnn.row_dot %d, %ad : tensor<4x8xf32> -> tensor<4xf32>
      %sum = gnn.add %l, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %lr = gnn.leaky_relu %sum {alpha = 2.000000e-01 : f64} : tensor<4xf32>
      gnn.yield %lr : tensor<4xf32>
    }
    // Edge softmax over the in-edges of each destination.
    %m = gnn.gather max %g, %e to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
    %ms = gnn.scatter %g, %m from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
    %ex = gnn.apply_edge %g (%e, %ms) : (!gnn.etensor<4xf32>, !gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
      %t = gnn.sub %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %r = gnn.exp %t : tensor<4xf32>
      gnn.yield %r : tensor<4xf32>
    }
    %den = gnn.gather sum %g, %ex to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
    %dens = gnn.scatter %g, %den from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
    %msg = gnn.apply_edge %g (%ex, %dens, %hs) : (!gnn.etensor<4xf32>, !gnn.etensor<4xf32>, !gnn.etensor<4x8xf32>) -> !gnn.etensor<4x8xf32> {
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %s: tensor<4x8xf32>):
      %alpha = gnn.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %ab = gnn.broadcast_heads %alpha : tensor<4xf32> -> tensor<4x8xf32>
      %r = gnn.mul %ab, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      gnn.yield %r : tensor<4x8xf32>
    }
    %agg = gnn.gather sum %g, %msg to dst : !gnn.etensor<4x8xf32> -> !gnn.vtensor<4x8xf32>
    %h1 = gnn.apply_vertex %g (%agg) params(%b1) : (!gnn.vtensor<4x8xf32>) params(tensor<4x8xf32>) -> !gnn.vtensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
      %t = gnn.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      %r = gnn.elu %t : tensor<4x8xf32>
      %d = gnn.dropout %r {rate = 5.000000e-01 : f64} : tensor<4x8xf32>
      gnn.yield %d : tensor<4x8xf32>
    }

    // Layer 2: one head; the projection merges the 4 heads of layer 1.
    %hw2 = gnn.apply_vertex %g (%h1) params(%w2) : (!gnn.vtensor<4x8xf32>) params(tensor<4x8x?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%v: tensor<4x8xf32>, %w: tensor<4x8x?xf32>):
      %t = gnn.linear %v, %w : (tensor<4x8xf32>, tensor<4x8x?xf32>) -> tensor<?xf32>
      gnn.yield %t : tensor<?xf32>
    }
    %hs2 = gnn.scatter %g, %hw2 from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %hd2 = gnn.scatter %g, %hw2 from dst : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %e2 = gnn.apply_edge %g (%hs2, %hd2) params(%as2, %ad2) : (!gnn.etensor<?xf32>, !gnn.etensor<?xf32>) params(tensor<?xf32>, tensor<?xf32>) -> !gnn.etensor<1xf32> {
    ^bb0(%s: tensor<?xf32>, %d: tensor<?xf32>, %as: tensor<?xf32>, %ad: tensor<?xf32>):
      %l = gnn.row_dot %s, %as : tensor<?xf32> -> tensor<1xf32>
      %r = gnn.row_dot %d, %ad : tensor<?xf32> -> tensor<1xf32>
      %sum = gnn.add %l, %r : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
      %lr = gnn.leaky_relu %sum {alpha = 2.000000e-01 : f64} : tensor<1xf32>
      gnn.yield %lr : tensor<1xf32>
    }
    %m2 = gnn.gather max %g, %e2 to dst : !gnn.etensor<1xf32> -> !gnn.vtensor<1xf32>
    %ms2 = gnn.scatter %g, %m2 from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
    %ex2 = gnn.apply_edge %g (%e2, %ms2) : (!gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<1xf32> {
    ^bb0(%a: tensor<1xf32>, %b: tensor<1xf32>):
      %t = gnn.sub %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
      %r = gnn.exp %t : tensor<1xf32>
      gnn.yield %r : tensor<1xf32>
    }
    %den2 = gnn.gather sum %g, %ex2 to dst : !gnn.etensor<1xf32> -> !gnn.vtensor<1xf32>
    %dens2 = gnn.scatter %g, %den2 from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
    %msg2 = gnn.apply_edge %g (%ex2, %dens2, %hs2) : (!gnn.etensor<1xf32>, !gnn.etensor<1xf32>, !gnn.etensor<?xf32>) -> !gnn.etensor<?xf32> {
    ^bb0(%a: tensor<1xf32>, %b: tensor<1xf32>, %s: tensor<?xf32>):
      %alpha = gnn.div %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
      %r = gnn.mul %s, %alpha : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
      gnn.yield %r : tensor<?xf32>
    }
    %agg2 = gnn.gather sum %g, %msg2 to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
    %logits = gnn.apply_vertex %g (%agg2) params(%b2) : (!gnn.vtensor<?xf32>) params(tensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
      %t = gnn.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      gnn.yield %t : tensor<?xf32>
    }

    %loss = gnn.softmax_cross_entropy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
