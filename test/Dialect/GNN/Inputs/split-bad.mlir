func.func @ok() {
  return
}

// -----

func.func @bad() {
  %0 = "gnn.nope"() : () -> i32
  return
}
