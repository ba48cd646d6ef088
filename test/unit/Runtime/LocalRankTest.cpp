//===- LocalRankTest.cpp - The CUDA device of a process ------------------===//
//
// chooseCudaDevice (runtime/support/LocalRank.h): one process per GPU, by
// node-local rank, as each launcher exports it; MEGAGRAPH_CUDA_DEVICE
// overrides and is checked. chooseNumThreads: the node's cores shared
// among its ranks; MEGAGRAPH_NUM_THREADS overrides.
//
//===----------------------------------------------------------------------===//

#include "support/LocalRank.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

namespace {

using Env = std::map<std::string, std::string>;

/// A getenv that reads `env` (which must outlive it).
std::function<const char *(const char *)> reader(const Env &env) {
  return [&env](const char *name) -> const char * {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
}

int choose(int count, Env env, std::string *error = nullptr) {
  std::string why;
  const int d = mgrt::chooseCudaDevice(count, reader(env), why);
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

int threads(int cores, Env env) {
  return mgrt::chooseNumThreads(cores, reader(env));
}

TEST(LocalRank, ThreadsShareTheCoresAmongTheNodesRanks) {
  EXPECT_EQ(threads(8, {}), 8);
  EXPECT_EQ(threads(8, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}), 4);
  EXPECT_EQ(threads(8, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "3"}}), 2);
  EXPECT_EQ(threads(8, {{"MPI_LOCALNRANKS", "8"}}), 1);
  EXPECT_EQ(threads(16, {{"MV2_COMM_WORLD_LOCAL_SIZE", "4"}}), 4);
  // More ranks than cores: one thread each.
  EXPECT_EQ(threads(2, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}), 1);
  // Open MPI's variable first; garbage and 0 are ignored.
  EXPECT_EQ(threads(8, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                        {"MPI_LOCALNRANKS", "2"}}),
            2);
  EXPECT_EQ(threads(8, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "x"},
                        {"MPI_LOCALNRANKS", "2"}}),
            4);
  EXPECT_EQ(threads(8, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "0"}}), 8);
  // An unknown core count still gives one thread.
  EXPECT_EQ(threads(0, {}), 1);
}

TEST(LocalRank, CoresOfRankIgnoreTheThreadOverride) {
  auto cores = [](int n, Env env) { return mgrt::coresOfRank(n, reader(env)); };
  EXPECT_EQ(cores(8, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                      {"MEGAGRAPH_NUM_THREADS", "1"}}),
            4);
  EXPECT_EQ(cores(2, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}), 1);
  EXPECT_EQ(cores(6, {}), 6);
}

TEST(LocalRank, ThreadsOverrideWins) {
  EXPECT_EQ(threads(2, {{"MEGAGRAPH_NUM_THREADS", "6"},
                        {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}),
            6);
  EXPECT_EQ(threads(2, {{"MEGAGRAPH_NUM_THREADS", "5000"}}), 1024);
  EXPECT_EQ(threads(4, {{"MEGAGRAPH_NUM_THREADS", "-1"},
                        {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
            2);
}

} // namespace
