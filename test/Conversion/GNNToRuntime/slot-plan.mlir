// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime | FileCheck %s
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime | %PYTHON %S/Inputs/count_slots.py | FileCheck %s --check-prefix=COUNT
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="meta=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=META

// Slot plan, per-head spreading and in-place runs.
//
// t = x W (V x 32), s = t . att per head (V x 4), m = t * broadcast_heads(s)
// (V x 32), o = m W2 (V x C). The broadcast_heads joins the multiplication's
// run: element j of the row reads head j / 8 of s, so the 32-wide spread is
// never stored. Nothing reads t after the run, so m is stored over t (through
// the kernel's memref of t: no second kernel argument). The
// plan then places the three buffers largest first: t (and m) in slot 0, s
// in slot 1, o (born after s's last reader) in slot 1 too.

// COUNT: gnn_eval: 3 buffers in 2 slots

// CHECK-LABEL: func.func @gnn_eval
// CHECK:         call @gnnrtFeatures
// CHECK:         %[[S0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    %[[T:.*]] = call @gnnrtBuffer(%{{.*}}, %[[S0]], %{{.*}})
// CHECK:         call @gnnrtGemm
// CHECK:         %[[S1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    %[[S:.*]] = call @gnnrtBuffer(%{{.*}}, %[[S1]], %{{.*}})
// CHECK-NOT:     call @gnnrtBuffer
// CHECK:         call @gnnrtKernelArg(%{{.*}}, %{{.*}}, %[[S]])
// CHECK:         call @gnnrtKernelArg(%{{.*}}, %{{.*}}, %[[T]])
// CHECK-NOT:     call @gnnrtKernelArg(
// CHECK:         %[[K:.*]] = constant @__gnn_kernel_[[N:[0-9]+]]
// CHECK:         call @gnnrtParallelFor(%{{.*}}, %[[K]]
// CHECK:         %[[S1B:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    call @gnnrtBuffer(%{{.*}}, %[[S1B]], %{{.*}})
// CHECK:         call @gnnrtGemm(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[T]],

// The run's kernel: per row r, per head h (size / 8), per element k of the
// head: s is loaded at the head (loop-invariant in k), t at j = h * 8 + k,
// and m is stored over t at the same index.
// CHECK:       func.func private @__gnn_kernel_[[N]](
// CHECK:         scf.for %[[R:.*]] =
// CHECK:           %[[HEADS:.*]] = arith.divui %{{.*}}, %c8 : index
// CHECK-NEXT:      scf.for %[[H:.*]] = %{{.*}} to %[[HEADS]]
// CHECK-NEXT:        %[[BASE:.*]] = arith.muli %[[H]], %c8 : index
// CHECK-NEXT:        scf.for %[[K:.*]] = %{{.*}} to %c8
// CHECK-NEXT:          %[[J:.*]] = arith.addi %[[BASE]], %[[K]] : index
// CHECK-NEXT:          %[[SROW:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK-NEXT:          %[[SAT:.*]] = arith.addi %[[SROW]], %[[H]] : index
// CHECK-NEXT:          memref.load %{{.*}}[%[[SAT]]]
// CHECK-NEXT:          %[[TROW:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK-NEXT:          %[[TAT:.*]] = arith.addi %[[TROW]], %[[J]] : index
// CHECK-NEXT:          memref.load %[[TBUF:.*]][%[[TAT]]]
// CHECK-NOT:           memref.load
// CHECK:               memref.store %{{.*}}, %[[TBUF]][%{{.*}}]
// CHECK-NOT:           memref.store
// CHECK:         return

// META: error: convert-gnn-to-runtime: cannot read '{{.*}}.missing.json'
func.func @heads(%w: tensor<?x4x8xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "", ""]},
                 %att: tensor<4x8xf32> {gnn.param = "att", gnn.init = #gnn.init<glorot>},
                 %w2: tensor<4x8x?xf32> {gnn.param = "w2", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%x) params(%w, %att, %w2) : (!gnn.vtensor<?xf32>) params(tensor<?x4x8xf32>, tensor<4x8xf32>, tensor<4x8x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x4x8xf32>, %av: tensor<4x8xf32>, %w2v: tensor<4x8x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x4x8xf32>) -> tensor<4x8xf32>
    %s = gnn.row_dot %t, %av : tensor<4x8xf32> -> tensor<4xf32>
    %b = gnn.broadcast_heads %s : tensor<4xf32> -> tensor<4x8xf32>
    %m = gnn.mul %t, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %l = gnn.linear %m, %w2v : (tensor<4x8xf32>, tensor<4x8x?xf32>) -> tensor<?xf32>
    gnn.yield %l : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}
