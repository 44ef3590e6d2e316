// RUN: gnn-opt %s --split-input-file --gnn-autodiff --convert-gnn-to-runtime | FileCheck %s
// RUN: gnn-opt %examples/models/gcn.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime | FileCheck %s --check-prefix=GCN
// RUN: gnn-opt %s --split-input-file --gnn-autodiff --convert-gnn-to-runtime="target=cuda" | FileCheck %s --check-prefix=CUDA

// Where an element-wise run puts its results.
//
// 1. A result only summed over the vertices after its stage is never stored.
//    The attention gradient of `s = t . att` is sum_rows(broadcast_heads(g_s)
//    * t): the backward run adds each row into its chunk's partial row (rows
//    r / 32: the chunks of gnnrtParallelFor, GNNRT_PARALLEL_CHUNK), restarting
//    at the chunk's first row, and sum_rows adds the ceil(V / 32) partials.

// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[C31:.*]] = arith.constant 31 : index
// CHECK-NEXT:    %[[VP:.*]] = arith.addi %{{.*}}, %[[C31]] : index
// CHECK-NEXT:    %[[CHUNKS:.*]] = arith.divui %[[VP]], %[[C32]] : index
// CHECK:         %[[PSIZE:.*]] = arith.muli %[[CHUNKS]], %{{.*}} : index
// CHECK:         %[[PSIZE64:.*]] = arith.index_cast %[[PSIZE]] : index to i64
// CHECK-NEXT:    %[[PART:.*]] = call @gnnrtBuffer(%{{.*}}, %{{.*}}, %[[PSIZE64]])
// CHECK:         call @gnnrtKernelArg(%{{.*}}, %{{.*}}, %[[PART]])
// CHECK:         %[[K:.*]] = constant @__gnn_kernel_[[N:[0-9]+]]
// CHECK:         call @gnnrtParallelFor(%{{.*}}, %[[K]]
// CHECK:         %[[ROWS:.*]] = arith.index_cast %[[CHUNKS]] : index to i64
// CHECK-NEXT:    %{{.*}} = arith.index_cast
// CHECK-NEXT:    call @gnnrtSumRows(%arg0, %[[ROWS]], %{{.*}}, %[[PART]], %{{.*}})
//
// On the GPU the kernel writing the partials takes whole chunks: a thread
// per 32 rows (GPUKernelEmitter.cpp, needChunkedRows); the others a thread
// per row.
// CUDA-LABEL: func.func @gnn_train_step
// CUDA:         %[[CHUNKS:.*]] = arith.divui %{{.*}}, %c32{{.*}} : index
// CUDA:         %[[PART:.*]] = call @gnnrtBuffer(
// CUDA:         %[[THREADS:.*]] = arith.ceildivsi %{{.*}}, %[[C32:c32[_0-9]*]] : index
// CUDA:         gpu.launch_func  @gnn_kernels::@[[K:__gnn_kernel_[0-9]+]] {{.*}}args({{.*}}%[[PART]] : memref<?xf32>
// CUDA:         gpu.func @[[K]](
// CUDA:           %[[T:[0-9]+]] = arith.addi
// CUDA-NEXT:      %[[C:.*]] = arith.constant 32 : index
// CUDA-NEXT:      %{{.*}} = arith.muli %[[T]], %[[C]] : index
//
// The kernel: the partial row of row r, restarted where r % 32 == 0.
// CHECK:       func.func private @__gnn_kernel_[[N]](%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
// CHECK:         scf.for %[[R:.*]] =
// CHECK:           arith.divui %[[R]], %c32
// CHECK:           %[[REM:.*]] = arith.remui %[[R]], %c32
// CHECK-NEXT:      %[[FIRST:.*]] = arith.cmpi eq, %[[REM]], %c0
// CHECK:           scf.for
// CHECK:             %[[SEL:.*]] = arith.select %[[FIRST]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:        memref.store %[[SEL]]
// CHECK:         return
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

// -----

// 2. A stored result may take over the buffer of a run operand that nothing
//    reads afterwards. Here t is still read by the second linear, so the
//    run's u = t * broadcast_heads(s) + 1 gets a buffer of its own; the
//    logits' sum l2 + l3 is then stored over l2 (the kernel writes through
//    its memref of l2), and the loss reads l2's buffer.

// CHECK-LABEL: func.func @gnn_eval
// CHECK:         %[[T:.*]] = call @gnnrtBuffer
// CHECK:         call @gnnrtGemm(%arg0, {{.*}}, %[[T]])
// CHECK:         %[[S:.*]] = call @gnnrtBuffer
// CHECK:         %[[ONE:.*]] = call @gnnrtBuffer
// CHECK:         %[[U:.*]] = call @gnnrtBuffer
// CHECK-NOT:     call @gnnrtBuffer
// CHECK:         call @gnnrtKernelArg(%{{.*}}, %{{.*}}, %[[S]])
// CHECK:         call @gnnrtKernelArg(%{{.*}}, %{{.*}}, %[[T]])
// CHECK:         call @gnnrtKernelArg(%{{.*}}, %{{.*}}, %[[ONE]])
// CHECK:         call @gnnrtKernelArg(%{{.*}}, %{{.*}}, %[[U]])
// CHECK:         call @gnnrtParallelFor
// CHECK:         %[[L2:.*]] = call @gnnrtBuffer
// CHECK:         call @gnnrtGemm(%arg0, {{.*}}, %[[U]], {{.*}}, %[[L2]])
// CHECK:         %[[L3:.*]] = call @gnnrtBuffer
// CHECK:         call @gnnrtGemm(%arg0, {{.*}}, %[[T]], {{.*}}, %[[L3]])
// CHECK-NOT:     call @gnnrtBuffer
// CHECK:         call @gnnrtKernelArg(%{{.*}}, %{{.*}}, %[[L2]])
// CHECK:         call @gnnrtKernelArg(%{{.*}}, %{{.*}}, %[[L3]])
// CHECK-NOT:     call @gnnrtKernelArg(
// CHECK:         call @gnnrtParallelFor
// CHECK-NOT:     call @gnnrtBuffer
// CHECK:         call @gnnrtSoftmaxCrossEntropy(%{{.*}}, %[[L2]],
func.func @kept(%w: tensor<?x4x8xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "", ""]},
                %att: tensor<4x8xf32> {gnn.param = "att", gnn.init = #gnn.init<glorot>},
                %w2: tensor<4x8x?xf32> {gnn.param = "w2", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "", "classes"]},
                %w3: tensor<4x8x?xf32> {gnn.param = "w3", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%x) params(%w, %att, %w2, %w3) : (!gnn.vtensor<?xf32>) params(tensor<?x4x8xf32>, tensor<4x8xf32>, tensor<4x8x?xf32>, tensor<4x8x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x4x8xf32>, %av: tensor<4x8xf32>, %w2v: tensor<4x8x?xf32>, %w3v: tensor<4x8x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x4x8xf32>) -> tensor<4x8xf32>
    %s = gnn.row_dot %t, %av : tensor<4x8xf32> -> tensor<4xf32>
    %b = gnn.broadcast_heads %s : tensor<4xf32> -> tensor<4x8xf32>
    %m = gnn.mul %t, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %one = gnn.constant dense<1.0> : tensor<f32>
    %u = gnn.add %m, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %l2 = gnn.linear %u, %w2v : (tensor<4x8xf32>, tensor<4x8x?xf32>) -> tensor<?xf32>
    %l3 = gnn.linear %t, %w3v : (tensor<4x8xf32>, tensor<4x8x?xf32>) -> tensor<?xf32>
    %l = gnn.add %l2, %l3 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    gnn.yield %l : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}

// 3. GCN's first-layer backward product `step(lin + b) * dropout(g)` is
//    yielded twice: to sum_rows (the bias gradient) and to the backward
//    SpMM. It is stored whole (V rows), and sum_rows reads V rows.

// GCN-LABEL: func.func @gnn_train_step
// GCN:         %[[D0:.*]] = call @gnnrtDim(%arg0, %c0_i64)
// GCN-NEXT:    %[[NUMV:.*]] = arith.index_cast %[[D0]] : i64 to index
// GCN:         call @gnnrtSoftmaxCrossEntropy
// GCN:         call @gnnrtSpmm
// GCN:         %[[K:.*]] = constant @__gnn_kernel_[[N:[0-9]+]]
// GCN:         call @gnnrtParallelFor(%{{.*}}, %[[K]]
// GCN:         call @gnnrtGemm
// GCN:         %[[V:.*]] = arith.index_cast %[[NUMV]] : index to i64
// GCN-NEXT:    arith.index_cast
// GCN-NEXT:    call @gnnrtSumRows(%arg0, %[[V]],
// GCN:       func.func private @__gnn_kernel_[[N]](
// GCN-NOT:     arith.remui
// GCN:         return
