// RUN: gnn-opt %s -split-input-file | FileCheck %s --check-prefix=PRINT
// RUN: gnn-opt %s -split-input-file --gnn-autodiff | FileCheck %s
// RUN: gnn-opt %s -split-input-file --gnn-autodiff --gnn-fuse-sag | FileCheck %s --check-prefix=FUSED

// GG-NN's typed sum as per-type slots (docs/Compiler.md, "Next: GG-NN's
// typed product out of its edge stage"): each edge's row placed in its
// type's slot, summed into the destination, then one linear with the
// 3 x 4 x C weight contracts the slots. The backward takes each edge's slot
// of the gradient (take_by_type, place_by_type's adjoint) and sums it into
// the source; the weight's gradient is an outer sum over the vertices.
// PRINT:         gnn.place_by_type %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<i32>) -> tensor<3x4xf32>
// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         gnn.outer_sum %{{.*}}, %{{.*}} : !gnn.vtensor<3x4xf32>, !gnn.vtensor<?xf32> -> tensor<3x4x?xf32>
// CHECK:         gnn.scatter %{{.*}}, %{{.*}} from dst : !gnn.vtensor<3x4xf32> -> !gnn.etensor<3x4xf32>
// CHECK:         gnn.apply_edge
// CHECK:           gnn.take_by_type %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<i32>) -> tensor<4xf32>
// CHECK:         gnn.gather sum %{{.*}}, %{{.*}} to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
// Both aggregations fuse: no edge tensor is left (the type is an edge
// input of the fused gathers).
// FUSED-LABEL: func.func @gnn_train_step
// FUSED-NOT:     gnn.scatter
// FUSED:         gnn.fused_gather sum %{{.*}} src(%{{.*}} : !gnn.vtensor<4xf32>) edge(%{{.*}} : !gnn.etensor<i32>) to dst : !gnn.vtensor<3x4xf32>
// FUSED:           gnn.place_by_type
// FUSED:         gnn.fused_gather sum %{{.*}} dst(%{{.*}} : !gnn.vtensor<3x4xf32>) edge(%{{.*}} : !gnn.etensor<i32>) to src : !gnn.vtensor<4xf32>
// FUSED:           gnn.take_by_type
func.func @typed_slots(%w: tensor<?x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
                       %o: tensor<3x4x?xf32> {gnn.param = "o", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %type = gnn.input %g "type" : !gnn.etensor<i32>
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x4xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %p = gnn.apply_edge %g (%s, %type) : (!gnn.etensor<4xf32>, !gnn.etensor<i32>) -> !gnn.etensor<3x4xf32> {
  ^bb0(%r: tensor<4xf32>, %ty: tensor<i32>):
    %q = gnn.place_by_type %r, %ty : (tensor<4xf32>, tensor<i32>) -> tensor<3x4xf32>
    gnn.yield %q : tensor<3x4xf32>
  }
  %a = gnn.gather sum %g, %p to dst : !gnn.etensor<3x4xf32> -> !gnn.vtensor<3x4xf32>
  %y = gnn.apply_vertex %g (%a) params(%o) : (!gnn.vtensor<3x4xf32>) params(tensor<3x4x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%av: tensor<3x4xf32>, %ov: tensor<3x4x?xf32>):
    %l = gnn.linear %av, %ov : (tensor<3x4xf32>, tensor<3x4x?xf32>) -> tensor<?xf32>
    gnn.yield %l : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %y, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %y : f32, !gnn.vtensor<?xf32>
}
