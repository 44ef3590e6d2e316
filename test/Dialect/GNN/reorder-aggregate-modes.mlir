// RUN: gnn-opt %s --gnn-reorder-aggregate="mode=always" -verify-diagnostics | FileCheck %s --check-prefix=ALWAYS
// RUN: gnn-opt %s --gnn-reorder-aggregate="mode=never features=602" -verify-diagnostics | FileCheck %s --check-prefix=NEVER
// RUN: not gnn-opt %s --gnn-reorder-aggregate="mode=sometimes" 2>&1 | FileCheck %s --check-prefix=BADMODE
// RUN: not gnn-opt %s --gnn-reorder-aggregate="meta=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=NOMETA
// RUN: echo '{"num_vertices": 10, "num_edges": 50, "num_features": 602, "num_classes": 41}' > %t.meta.json
// RUN: gnn-opt %s --gnn-reorder-aggregate="meta=%t.meta.json" 2>&1 | FileCheck %s --check-prefix=META

// ALWAYS: gnn.gather sum %{{.*}} : !gnn.etensor<256xf32> -> !gnn.vtensor<256xf32>
// NEVER: gnn.gather sum %{{.*}} : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
// BADMODE: error: gnn-reorder-aggregate: mode must be auto, always or never but is 'sometimes'
// NOMETA: error: gnn-reorder-aggregate: cannot read '{{.*}}missing.json'
// META: remark: aggregation reordered: width 602 -> 256 (cost per vertex 1.204000e+04 -> 5.120000e+03 FLOPs, avg degree 5.000000e+00)
func.func @f(%w: tensor<?x256xf32> {gnn.dims = ["features", ""]}, %x: !gnn.vtensor<?xf32>) -> !gnn.vtensor<256xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  // expected-remark @+1 {{aggregation}}
  %a = gnn.gather sum %g, %s to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%a) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x256xf32>) -> !gnn.vtensor<256xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x256xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x256xf32>) -> tensor<256xf32>
    gnn.yield %t : tensor<256xf32>
  }
  return %o : !gnn.vtensor<256xf32>
}
