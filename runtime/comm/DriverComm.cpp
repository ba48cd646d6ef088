//===- DriverComm.cpp - Data parallelism in the training driver -----------===//

#include "comm/DriverComm.h"

#include "megagraph/Comm.h"

#include <cstdint>

namespace mgrt {

bool setupDataParallel(const mgrt_plan *plan, DataParallel &dp,
                       std::string &error) {
  // gt-data-parallel sums the gradients over all dp x cp (or mop, gp)
  // ranks.
  const int64_t planned = mgrt_plan_processes(plan) / (plan ? plan->pp : 1);
  if (planned <= 1 && !mgrt_comm_launched())
    return true; // one process, MPI untouched
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_RETURN);
  const int rc = mgrt_comm_init(nullptr, nullptr);
  mgrt_comm_set_error_mode(prev);
  if (rc != MGRT_OK) {
    error = std::string("cannot initialize MPI: ") + mgrt_comm_last_error();
    return false;
  }
  const int world = mgrt_comm_size(mgrt_comm_world());
  if (world != planned) {
    error = planned <= 1
                ? "the model was compiled for one process (no --plan), but "
                  "the job has " +
                      std::to_string(world) +
                      " processes; compile with --plan dp=" +
                      std::to_string(world) + " or run it without mpirun"
                : "the model was compiled with --plan " +
                      std::string(plan->text) + " (" + std::to_string(planned) +
                      " processes), but the job has " + std::to_string(world) +
                      " process(es); launch it with "
                      "mpirun -np " +
                      std::to_string(planned) + " (or srun -n " +
                      std::to_string(planned) + ")";
    // Every rank finds the same mismatch: end the job from each.
    return false;
  }
  dp.rank = mgrt_comm_rank(mgrt_comm_world());
  dp.size = world;
  return true;
}

double sumOverRanks(const DataParallel &dp, double v) {
  if (dp.size == 1)
    return v;
  double sum = 0;
  mgrt_comm_all_reduce(mgrt_comm_world(), &v, &sum, 1, MGRT_F64, MGRT_COMM_SUM);
  return sum;
}

std::vector<size_t> gatherOverRanks(const DataParallel &dp, size_t v) {
  if (dp.size == 1)
    return {v};
  std::vector<int64_t> all(dp.size);
  const int64_t mine = static_cast<int64_t>(v);
  mgrt_comm_all_gather(mgrt_comm_world(), &mine, 1, all.data(), nullptr,
                       MGRT_I64);
  return std::vector<size_t>(all.begin(), all.end());
}

} // namespace mgrt
