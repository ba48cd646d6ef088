//===- LocalRankTest.cpp - The CUDA device of a process ------------------===//
//
// chooseCudaDevice (runtime/support/LocalRank.h): one process per GPU, by
// node-local rank, as each launcher exports it; MEGAGRAPH_CUDA_DEVICE
// overrides and is checked.
//
//===----------------------------------------------------------------------===//

#include "support/LocalRank.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

int choose(int count, std::map<std::string, std::string> env,
           std::string *error = nullptr) {
  std::string why;
  const int d = mgrt::chooseCudaDevice(
      count,
      [&](const char *name) -> const char * {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      why);
  if (error)
    *error = why;
  return d;
}

TEST(LocalRank, WithoutALauncherDeviceZero) { EXPECT_EQ(choose(4, {}), 0); }

TEST(LocalRank, EachLauncherLocalRankModuloDevices) {
  EXPECT_EQ(choose(4, {{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}), 3);
  EXPECT_EQ(choose(4, {{"OMPI_COMM_WORLD_LOCAL_RANK", "5"}}), 1);
  EXPECT_EQ(choose(8, {{"MPI_LOCALRANKID", "6"}}), 6);
  EXPECT_EQ(choose(2, {{"SLURM_LOCALID", "3"}}), 1);
  EXPECT_EQ(choose(8, {{"MV2_COMM_WORLD_LOCAL_RANK", "7"}}), 7);
  // Open MPI's variable first; garbage is ignored.
  EXPECT_EQ(
      choose(8, {{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"SLURM_LOCALID", "5"}}),
      2);
  EXPECT_EQ(
      choose(8, {{"OMPI_COMM_WORLD_LOCAL_RANK", "x"}, {"SLURM_LOCALID", "5"}}),
      5);
}

TEST(LocalRank, OverrideIsCheckedAgainstTheDevices) {
  EXPECT_EQ(choose(2, {{"MEGAGRAPH_CUDA_DEVICE", "1"},
                       {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}}),
            1);
  std::string error;
  EXPECT_EQ(choose(2, {{"MEGAGRAPH_CUDA_DEVICE", "2"}}, &error), -1);
  EXPECT_EQ(error, "MEGAGRAPH_CUDA_DEVICE=2 is not a device number (this "
                   "machine has 2 device(s), 0 to 1)");
  EXPECT_EQ(choose(2, {{"MEGAGRAPH_CUDA_DEVICE", "gpu0"}}, &error), -1);
}

} // namespace
