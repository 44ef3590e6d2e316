// The CUDA target's kernels (convert-gnn-to-runtime target=cuda,
// GPUKernelEmitter.cpp): each kernel is a gpu.func of the module's
// gpu.module, launched by gpu.launch_func over ceil(n / 256) blocks of 256
// threads; thread t takes row t under a guard (rows [32 t, 32 t + 32) where
// the kernel writes per-chunk partials: run-outputs.mlir); the operands the host set, and the graph's arrays the host gets
// with gnnrtGraphOffsets / gnnrtGraphIndex, are its parameters, n last. GAT
// has vertex stages and fused gathers (which read the graph's arrays).

// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="target=cuda" 2>/dev/null | FileCheck %s
// CHECK: module attributes {gpu.container_module}
// CHECK: func.func @gnn_train_step(%arg0: !llvm.ptr) -> f32
// CHECK: %[[OFF:[0-9]+]] = call @gnnrtGraphOffsets(%arg0, %{{.*}}) : (!llvm.ptr, i64) -> memref<?xi64>
// CHECK: %[[IDX:[0-9]+]] = call @gnnrtGraphIndex(%arg0, %{{.*}}) : (!llvm.ptr, i64) -> memref<?xi32>
// CHECK: %[[THREADS:[0-9]+]] = arith.ceildivsi %[[N:[0-9]+]], %c1{{.*}} : index
// CHECK: %[[B:[0-9]+]] = arith.ceildivsi %[[THREADS]], %c256{{.*}} : index
// CHECK: %[[BLOCKS:[0-9]+]] = arith.maxsi %[[B]], %{{.*}} : index
// CHECK: %[[NI64:[0-9]+]] = arith.index_cast %[[N]] : index to i64
// CHECK: gpu.launch_func  @gnn_kernels::@[[K:__gnn_kernel_[0-9]+]] blocks in (%[[BLOCKS]], %{{.*}}, %{{.*}}) threads in (%c256{{.*}}, %{{.*}}, %{{.*}}) args({{.*}}, %[[OFF]] : memref<?xi64>, %[[IDX]] : memref<?xi32>, %[[NI64]] : i64)
// CHECK: gpu.module @gnn_kernels {
// CHECK: gpu.func @[[K]]({{.*}}: memref<?xi64>, %[[GIDX:arg[0-9]+]]: memref<?xi32>, %[[GN:arg[0-9]+]]: i64) kernel {
// CHECK-NEXT: %[[KN:[0-9]+]] = arith.index_cast %[[GN]] : i64 to index
// CHECK-NEXT: %[[BID:.*]] = gpu.block_id  x
// CHECK-NEXT: %[[BDIM:.*]] = gpu.block_dim  x
// CHECK-NEXT: %[[TID:.*]] = gpu.thread_id  x
// CHECK-NEXT: %[[T0:[0-9]+]] = arith.muli %[[BID]], %[[BDIM]] : index
// CHECK-NEXT: %[[T:[0-9]+]] = arith.addi %[[T0]], %[[TID]] : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[BEGIN:[0-9]+]] = arith.muli %[[T]], %[[C1]] : index
// CHECK-NEXT: %[[E0:[0-9]+]] = arith.addi %[[BEGIN]], %[[C1]] : index
// CHECK-NEXT: %[[END:[0-9]+]] = arith.minsi %[[E0]], %[[KN]] : index
// CHECK-NEXT: %[[ANY:[0-9]+]] = arith.cmpi slt, %[[BEGIN]], %[[KN]] : index
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// CHECK: memref.load %[[GIDX]]
// CHECK: gpu.return

// No CPU kernels, no kernel arguments through the context.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="target=cuda" 2>/dev/null | FileCheck %s --check-prefix=NOCPU
// NOCPU-NOT: gnnrtParallelFor
// NOCPU-NOT: gnnrtKernelArg
// NOCPU-NOT: func.func private @__gnn_kernel

// The CPU target (the default) has no gpu.module.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime 2>/dev/null | FileCheck %s --check-prefix=CPU
// CPU-NOT: gpu.container_module
// CPU: call @gnnrtParallelFor
// CPU-NOT: gpu.module

// RUN: not gnn-opt %examples/models/gat.mlir --gnn-autodiff --convert-gnn-to-runtime="target=tpu" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: convert-gnn-to-runtime: option target must be cpu or cuda, not 'tpu'
