module {
  func.func @f(%g: !gnn.graph, %v: !gnn.vtensor<8xf32>) {
    %0 = gnn.scatter %g, %v from src : !gnn.vtensor<8xf32> -> !gnn.etensor<4xf32>
    return
  }
}
