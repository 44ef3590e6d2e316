//===- NCCL.h - the NCCL communicator ---------------------------*- C++ -*-===//
//
// Built as gnnrt_nccl where the CUDA device is built and NCCL and MPI are
// found (runtime/CMakeLists.txt; docs/CUDA.md, "NCCL").
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_COMM_NCCL_H
#define GNNRT_COMM_NCCL_H

#include "Communicator.h"

#include <memory>

namespace gnnrt {

/// This process's rank among the processes on its machine, from the
/// launcher's environment (OpenMPI, MPICH, MVAPICH, Slurm), else `rank`.
int localRank(int rank);

/// The collectives of Communicator.h on NCCL, on GPU memory: one process
/// per GPU (the GPU of its local rank, modulo the GPUs CUDA sees). The NCCL
/// id goes from rank 0 to the others over `bootstrap` (MPI's communicator,
/// or a world of one), which also gives the rank and the size. Stops the
/// run without a GPU.
std::unique_ptr<Communicator>
createNCCLCommunicator(std::shared_ptr<Communicator> bootstrap);

} // namespace gnnrt

#endif // GNNRT_COMM_NCCL_H
