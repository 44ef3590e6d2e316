//===- CUDADevice.h - the CUDA device of gnnrt ------------------*- C++ -*-===//
//
// Built as gnnrt_cuda when GNN_ENABLE_CUDA is on and CMake finds a CUDA
// compiler; not linked into gnnrt_main yet.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_CUDA_CUDADEVICE_H
#define GNNRT_CUDA_CUDADEVICE_H

#include "Device.h"

#include <memory>

namespace gnnrt {

/// The CUDA device on GPU `ordinal`: memory (cudaMalloc, pinned host memory,
/// cudaMemcpy, cudaMemset), the host's staged view of it, and the graph and
/// edge data in GPU memory. Kernel launches, the compute methods and the
/// optimizer step are not implemented yet: they stop the run with an error.
std::unique_ptr<Device> createCUDADevice(int ordinal = 0);

} // namespace gnnrt

#endif // GNNRT_CUDA_CUDADEVICE_H
