// RUN: gnn-opt %s -split-input-file --convert-gnn-to-runtime="row-chunks=2 graph-out-of-core=1" -verify-diagnostics

// The graph out of core (issue 18; docs/MemoryBudget.md, "The graph out of
// core") holds a row chunk's edges at a time: a step that reads every edge
// at once is an error naming what it calls. Here a scatter to the edges
// that no fusion took (a step over the edges, not the vertices) feeds a
// gather; the lowering runs them whole.

module {
  // expected-error @+1 {{the graph out of core (graph-out-of-core): this step reads every edge at once ('gnnrtScatter' outside the row chunks), but only a row chunk's edges are read in at a time}}
  func.func @gnn_train_step() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %s = gnn.scatter %g, %x from src : !gnn.vtensor<2xf32> -> !gnn.etensor<2xf32>
    %e = gnn.apply_edge %g (%s) : (!gnn.etensor<2xf32>) -> !gnn.etensor<2xf32> {
    ^bb0(%v: tensor<2xf32>):
      %r = gnn.exp %v : tensor<2xf32>
      gnn.yield %r : tensor<2xf32>
    }
    %a = gnn.gather sum %g, %e to dst : !gnn.etensor<2xf32> -> !gnn.vtensor<2xf32>
    %loss = gnn.softmax_cross_entropy %a, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %a : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "val_mask" : !gnn.vtensor<i1>
    %loss = gnn.softmax_cross_entropy %x, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %x : f32, !gnn.vtensor<2xf32>
  }
}

// The options: windows are a row chunk's edges, on the CPU.
// RUN: not gnn-opt %s -split-input-file --convert-gnn-to-runtime="graph-out-of-core=1" 2>&1 | FileCheck %s --check-prefix=NO-CHUNKS
// NO-CHUNKS: error: convert-gnn-to-runtime: option graph-out-of-core needs row chunks (option row-chunks above 1): a window holds a row chunk's edges
// RUN: not gnn-opt %s -split-input-file --convert-gnn-to-runtime="graph-out-of-core=1 row-chunks=2 target=cuda" 2>&1 | FileCheck %s --check-prefix=CUDA
// CUDA: error: convert-gnn-to-runtime: option graph-out-of-core is not supported on the CUDA target yet
// RUN: not gnn-opt %s -split-input-file --convert-gnn-to-runtime="graph-out-of-core=1 row-chunks=2 graph-window-edges=-1" 2>&1 | FileCheck %s --check-prefix=WINDOW
// WINDOW: error: convert-gnn-to-runtime: option graph-window-edges must be 0 or more but is -1
