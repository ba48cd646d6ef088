//===- DriverComm.h - Data parallelism in the training driver ---*- C++ -*-===//
//
// Internal to the runtime. What `--mode train` needs from the communication
// runtime: the model's plan (mgrt_model_info::plan; NULL = one process;
// the job has dp x cp ranks), MPI set up when the job
// was launched by mpirun/srun or the plan needs it, and small reductions of
// the driver's own counters. Rank r of a dp = P job trains on sequences
// [r B, (r + 1) B) of each global batch of P B sequences (B = the compiled
// batch); the compiled step averages the gradients.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_COMM_DRIVERCOMM_H
#define MEGAGRAPH_RUNTIME_COMM_DRIVERCOMM_H

#include "megagraph/ModelABI.h"

#include <cstddef>
#include <string>
#include <vector>

namespace mgrt {

struct DataParallel {
  int rank = 0; ///< this process's rank in the dp group
  int size = 1; ///< dp
};

/// Reads `plan` (NULL: one process), initializes MPI if needed and checks
/// that the job has exactly dp x cp processes; false with `error` set
/// otherwise.
bool setupDataParallel(const mgrt_plan *plan, DataParallel &dp,
                       std::string &error);

/// Sum of `v` over the dp ranks (v itself for one rank).
double sumOverRanks(const DataParallel &dp, double v);

/// `v` of every rank, by rank (every rank gets the list).
std::vector<size_t> gatherOverRanks(const DataParallel &dp, size_t v);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_COMM_DRIVERCOMM_H
