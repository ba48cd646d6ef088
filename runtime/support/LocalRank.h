//===- LocalRank.h - This process's rank on its node ------------*- C++ -*-===//
//
// Internal to the runtime. A multi-GPU program runs one process per GPU;
// each picks its device from its rank among the processes of its node,
// which every launcher exports before the program starts (so the device
// is chosen before the first CUDA call, without MPI). A CPU program's
// ranks on one node share its cores: each takes its share of threads.
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

/// The variables naming how many processes of the job share this node,
/// in the order they are read: Open MPI, MPICH / Hydra, MVAPICH. (Slurm
/// exports only a per-node task list; srun binds each task to its cores,
/// which the affinity mask then shows.)
inline constexpr const char *kLocalSizeEnv[] = {"OMPI_COMM_WORLD_LOCAL_SIZE",
                                                "MPI_LOCALNRANKS",
                                                "MV2_COMM_WORLD_LOCAL_SIZE"};

/// The variable that overrides the choice (a device number).
inline constexpr const char *kCudaDeviceEnv = "MEGAGRAPH_CUDA_DEVICE";

/// The variable that overrides the kernels' thread count.
inline constexpr const char *kNumThreadsEnv = "MEGAGRAPH_NUM_THREADS";

/// The device of this process among `count` (> 0): MEGAGRAPH_CUDA_DEVICE
/// when set, else the node-local rank modulo `count`, else 0. `getenv`
/// reads the environment (tests pass their own). Returns -1 with `error`
/// set when MEGAGRAPH_CUDA_DEVICE is not a device number below `count`.
int chooseCudaDevice(int count,
                     const std::function<const char *(const char *)> &getenv,
                     std::string &error);

/// This process's share of the `cores` cores it may run on (its affinity
/// mask): divided among the processes of the job on this node
/// (kLocalSizeEnv), at least 1.
int coresOfRank(int cores,
                const std::function<const char *(const char *)> &getenv);

/// The kernels' threads for a process that may run on `cores` cores:
/// MEGAGRAPH_NUM_THREADS when a positive integer (at most 1024), else
/// coresOfRank. Ranks of one node that each started
/// a thread per core would time-share the cores, and every parallel loop
/// would wait for its slowest, descheduled thread.
int chooseNumThreads(int cores,
                     const std::function<const char *(const char *)> &getenv);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_SUPPORT_LOCALRANK_H
