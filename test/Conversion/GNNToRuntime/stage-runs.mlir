// RUN: gnn-opt %examples/models/gcn.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime | FileCheck %s

// GCN's first-layer backward stage is `step(lin + b) * dropout(g)`. The
// dropout joins the element-wise run (its mask is computed per element in
// the loop: the runtime's counter-based formula, with the key, threshold
// and scale of this step from gnnrtDropoutParam), so `lin + b`, `step`, the
// dropout and `*` are one parallel loop nest that stores only the product:
// one kernel after the backward SpMM, and no runtime dropout pass anywhere.
// The program is not partitioned: the kernel numbers its rows for the mask
// by the bound graph's global ids (gnnrtVertexIds, ABI 26; a rank's closure
// or a sampled batch), one i32 kernel buffer, so that a part of the graph
// draws the whole graph's masks.

// CHECK-LABEL: func.func @gnn_train_step
// CHECK-NOT:     call @gnnrtDropout(
// CHECK:         call @gnnrtSoftmaxCrossEntropy
// CHECK:         call @gnnrtSpmm
// CHECK-COUNT-3: call @gnnrtDropoutParam(%{{.*}}, %c1_i64{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, f64, i64) -> i64
// CHECK:         %[[IDS:.*]] = call @gnnrtVertexIds(%{{.*}}) : (!llvm.ptr) -> memref<?xi32>
// CHECK:         call @gnnrtKernelArgI32(%{{.*}}, %{{.*}}, %[[IDS]])
// CHECK:         %[[K:.*]] = constant @__gnn_kernel_[[N:[0-9]+]]
// CHECK:         call @gnnrtParallelFor(%{{.*}}, %[[K]]
// CHECK-NOT:     call @gnnrtParallelFor
// CHECK-NOT:     call @gnnrtDropout(
// CHECK:         call @gnnrtSetOutput

// The kernel: per row, its global id (ids[r], or r itself where the ids
// are empty: a whole graph), outside the loop over the row's elements;
// Random.h's 32-bit draw of the element index id * width + j (its halves
// in Weyl sequences, murmur3's finaliser), the 24-bit draw against the
// threshold, the scale from its f32 bits.
// CHECK:         func.func private @__gnn_kernel_[[N]](
// CHECK:           %[[IDK:.*]] = call @gnnrtKernelArgI32Get(%arg0, %{{.*}})
// CHECK:           scf.for %[[R:[a-z0-9_]+]] =
// CHECK:             %[[D:.*]] = memref.dim %[[IDK]], %{{.*}} : memref<?xi32>
// CHECK:             %[[SOME:.*]] = arith.cmpi ugt, %[[D]], %{{.*}} : index
// CHECK:             %[[ROW:.*]] = scf.if %[[SOME]] -> (index) {
// CHECK:               %[[ID:.*]] = memref.load %[[IDK]][%[[R]]] : memref<?xi32>
// CHECK:               %[[IDX:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK:               scf.yield %[[IDX]] : index
// CHECK:             } else {
// CHECK:               scf.yield %[[R]] : index
// CHECK:             scf.for %[[J:[a-z0-9_]+]] =
// CHECK:               %[[BASE:.*]] = arith.muli %[[ROW]], %{{.*}} : index
// CHECK:               %[[E:.*]] = arith.addi %[[BASE]], %[[J]] : index
// CHECK:               arith.index_cast %[[E]] : index to i64
// CHECK:           arith.trunci %{{.*}} : i64 to i32
// CHECK:           arith.muli %{{.*}}, %{{.*}} : i32
// CHECK:           arith.shrui %{{.*}}, %{{.*}} : i32
// CHECK:           arith.cmpi uge
// CHECK:           arith.bitcast %{{.*}} : i32 to f32
// CHECK:           arith.select
