//===- Profile.h - Hardware profiles of the plan search ---------*- C++ -*-===//
//
// Part of MegaGraph. A hardware profile is what the cost model needs to know
// about a machine: sustained GEMM and fused-attention throughput, memory
// bandwidth, the memory of one device, and an alpha-beta model of the
// collectives inside a node and across nodes. `megagraph-profile` measures
// one (JSON); built-in ones (the CPU here and A100/H100/H200 from data
// sheets) are selected by name.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PLAN_PROFILE_H
#define MEGAGRAPH_PLAN_PROFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace megagraph {

/// alpha (seconds per message) and beta (seconds per byte on the wire).
struct AlphaBeta {
  double alpha = 0;
  double beta = 0;
};

struct HardwareProfile {
  std::string name;
  /// "cpu" or "cuda".
  std::string target = "cpu";
  /// Sustained FLOP/s of one device (the whole machine for the CPU) on
  /// large GEMMs, on the fused attention kernels, and on small GEMMs
  /// (the rate of GEMMs with a dimension under 64).
  double gemmFlops = 0, attentionFlops = 0, smallGemmFlops = 0;
  /// Bytes/s of elementwise kernels (read + write).
  double memoryBandwidth = 0;
  /// Fixed cost of one kernel launch / op (seconds).
  double opOverhead = 0;
  /// Sustained FLOP/s of n x n x n GEMMs by n, ascending (megagraph-profile's
  /// `gemm_curve`); empty: only the gemm / small-GEMM rates are known.
  std::vector<std::pair<int64_t, double>> gemmCurve;
  /// Per-rank workspace of the runtime's kernels (CPU: one packed-GEMM
  /// panel per worker thread), allocated during every step.
  int64_t scratchBytes = 0;
  /// Memory of one device in bytes (0: unknown).
  int64_t deviceMemory = 0;
  /// Devices per node: groups up to this size use `intra`, larger `inter`.
  int64_t devicesPerNode = 1;
  /// CPU: ranks on one node share its cores (and `gemmFlops` is the whole
  /// node's); a GPU rank owns its device.
  bool sharedCompute = false;
  /// CPU: the cores of a node (0: unknown). The runtime gives each of a
  /// node's R ranks max(1, cores / R) kernel threads (support/LocalRank.h).
  int64_t coresPerNode = 0;
  /// Seconds one synchronisation of ranks costs on a node with more ranks
  /// than cores, beyond alpha: a collective call, a ring step or a pipeline
  /// transfer waits until every peer it needs has been given a core
  /// (megagraph-profile measures it; 0: not modelled).
  double syncLatency = 0;
  AlphaBeta intra, inter;
  /// Rows of the attention backward kernel's blocks: a rank's rows are
  /// padded to a multiple of it (runtime/kernels/AttentionBackward.cpp: 96
  /// on the CPU; runtime/cuda/AttentionKernels.cuh: 64 on a GPU).
  int64_t attentionRowBlock = 96;
  /// Communication can overlap computation (ring cp attention): GPUs with
  /// copy engines; not the CPU, whose cores do the copies.
  bool overlap = true;
  /// Measured points (bytes, seconds) of an all-reduce per group size,
  /// kept for reference; the model uses intra/inter.
  std::vector<std::pair<int64_t, AlphaBeta>> allReduceByGroup;

  /// FLOP/s of an m x k x n GEMM: the GEMM curve interpolated (log-log) at
  /// the geometric mean of the two largest of m, k, n, clamped to its ends
  /// (e.g. 256 x 64 x 64 runs like n = 128); without a curve gemmFlops,
  /// or smallGemmFlops when a size is under 64.
  double gemmRate(double m, double k, double n) const;
  /// Compute-rate share of one of `ranksOnNode` ranks (1 for GPUs).
  double computeShare(int64_t ranksOnNode) const;
  /// Kernel threads of one of `ranksOnNode` ranks; 0 when the cores are
  /// unknown or compute is not shared.
  int64_t threadsPerRank(int64_t ranksOnNode) const;
  /// Whether `ranksOnNode` ranks time-share the node's cores (more ranks
  /// than cores): a rank waiting for a peer gives its core away, and ranks
  /// idle in a pipeline bubble leave theirs to the others.
  bool oversubscribed(int64_t ranksOnNode) const;
  /// How much faster one rank computes alone than with all `ranksOnNode`
  /// ranks busy: its threads' share of the cores over computeShare (1
  /// unless oversubscribed).
  double aloneSpeedup(int64_t ranksOnNode) const;
  /// The kernels' per-rank workspace with `ranksOnNode` ranks on the node:
  /// scratchBytes (one process with a thread per core) scaled to the
  /// rank's threads.
  double rankScratchBytes(int64_t ranksOnNode) const;
  /// Seconds of a ring all-reduce of `bytes` over `group` devices.
  double allReduce(int64_t group, double bytes) const;
  /// Seconds of an all-gather / reduce-scatter whose full buffer is
  /// `bytes` over `group` devices.
  double allGather(int64_t group, double bytes) const;
  /// Seconds of one point-to-point message (pipeline stages).
  double sendRecv(double bytes, bool crossNode) const;
};

/// Names of the built-in profiles: cpu-here, a100, h100, h200.
std::vector<std::string> builtinProfileNames();
/// A built-in profile by name (case-insensitive); false if unknown.
bool getBuiltinProfile(llvm::StringRef name, HardwareProfile &profile);
/// A built-in name or a JSON file written by megagraph-profile; the error
/// names the --profile value and what is wrong with it.
llvm::Expected<HardwareProfile> loadProfile(llvm::StringRef nameOrFile);

llvm::json::Value toJSON(const HardwareProfile &profile);
bool fromJSON(const llvm::json::Value &value, HardwareProfile &profile,
              llvm::json::Path path);

/// Byte counts such as 1073741824, 512MiB, 2GiB, 80GB (K/M/G/T and
/// KiB..TiB: powers of 1024; KB..TB: powers of 1000). False if malformed.
bool parseByteCount(llvm::StringRef text, int64_t &bytes);
/// 1.50 GiB, 12.0 MiB ...
std::string formatBytes(double bytes);

} // namespace megagraph

#endif // MEGAGRAPH_PLAN_PROFILE_H
