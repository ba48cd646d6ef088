//===- LocalRank.h - This process's rank on its node ------------*- C++ -*-===//
//
// Internal to the runtime. A multi-GPU program runs one process per GPU;
// each picks its device from its rank among the processes of its node,
// which every launcher exports before the program starts (so the device
// is chosen before the first CUDA call, without MPI).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_SUPPORT_LOCALRANK_H
#define MEGAGRAPH_RUNTIME_SUPPORT_LOCALRANK_H

#include <functional>
#include <string>

namespace mgrt {

/// The environment variables naming the node-local rank, in the order
/// they are read: Open MPI, MPICH / Hydra, Slurm, MVAPICH.
inline constexpr const char *kLocalRankEnv[] = {
    "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
    "MV2_COMM_WORLD_LOCAL_RANK"};

/// The variable that overrides the choice (a device number).
inline constexpr const char *kCudaDeviceEnv = "MEGAGRAPH_CUDA_DEVICE";

/// The device of this process among `count` (> 0): MEGAGRAPH_CUDA_DEVICE
/// when set, else the node-local rank modulo `count`, else 0. `getenv`
/// reads the environment (tests pass their own). Returns -1 with `error`
/// set when MEGAGRAPH_CUDA_DEVICE is not a device number below `count`.
int chooseCudaDevice(int count,
                     const std::function<const char *(const char *)> &getenv,
                     std::string &error);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_SUPPORT_LOCALRANK_H
