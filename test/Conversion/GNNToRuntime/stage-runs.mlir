// RUN: gnn-opt %examples/models/gcn.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime | FileCheck %s

// GCN's first-layer backward stage is `step(lin + b) * dropout(g)`. The
// dropout joins the element-wise run (its mask is computed per element in
// the loop: the runtime's counter-based formula, with the key, threshold
// and scale of this step from gnnrtDropoutParam), so `lin + b`, `step`, the
// dropout and `*` are one parallel loop nest that stores only the product:
// one kernel after the backward SpMM, and no runtime dropout pass anywhere.

// CHECK-LABEL: func.func @gnn_train_step
// CHECK-NOT:     call @gnnrtDropout(
// CHECK:         call @gnnrtSoftmaxCrossEntropy
// CHECK:         call @gnnrtSpmm
// CHECK-COUNT-3: call @gnnrtDropoutParam(%{{.*}}, %c1_i64{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, f64, i64) -> i64
// CHECK:         %[[K:.*]] = constant @__gnn_kernel_[[N:[0-9]+]]
// CHECK:         call @gnnrtParallelFor(%{{.*}}, %[[K]]
// CHECK-NOT:     call @gnnrtParallelFor
// CHECK-NOT:     call @gnnrtDropout(
// CHECK:         call @gnnrtSetOutput

// The kernel: Random.h's 32-bit draw of the flat element index (its
// halves in Weyl sequences, murmur3's finaliser), the 24-bit draw against
// the threshold, the scale from its f32 bits.
// CHECK:         func.func private @__gnn_kernel_[[N]](
// CHECK:           arith.trunci %{{.*}} : i64 to i32
// CHECK:           arith.muli %{{.*}}, %{{.*}} : i32
// CHECK:           arith.shrui %{{.*}}, %{{.*}} : i32
// CHECK:           arith.cmpi uge
// CHECK:           arith.bitcast %{{.*}} : i32 to f32
// CHECK:           arith.select
