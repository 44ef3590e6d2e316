module {
  func.func @f(%g: !gnn.graph, %e: !gnn.etensor<4xf32>) {
    %0 = gnn.gather summ %g, %e to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
    return
  }
}
