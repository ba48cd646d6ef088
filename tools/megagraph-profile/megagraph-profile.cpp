//===- megagraph-profile.cpp - Measure a hardware profile -----------------===//
//
// Part of MegaGraph. Measures what the plan search's cost model needs about
// this machine and writes it as a JSON hardware profile
// (megagraph/Plan/Profile.h) for `megagraph-compile --profile FILE`:
//
//   * GEMM throughput over sizes (the runtime's matmul kernel), the rate of
//     small GEMMs, and the fused attention kernel's throughput;
//   * memory bandwidth (large copies) and the per-op overhead;
//   * the runtime kernels' per-rank workspace (tracked allocator);
//   * under `mpirun -np P`: all-reduce time per group size 2, 4, .. P over
//     message sizes, fitted to the ring alpha-beta model, and with more
//     ranks than cores what each synchronisation costs beyond that.
//
// Compute is measured by rank 0 alone with a kernel thread per core (the
// node's rate; the other ranks wait): on a CPU the ranks of a node share its
// cores, which is how the cost model uses the number.
// `--builtin NAME` writes a built-in profile (cpu-here, a100, h100, h200)
// instead of measuring.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Comm.h"
#include "megagraph/Plan/Profile.h"
#include "megagraph/Runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace llvm;
using megagraph::HardwareProfile;

namespace {

cl::OptionCategory category("megagraph-profile options");
cl::opt<std::string> outFile("out", cl::desc("Output JSON file ('-': stdout)"),
                             cl::value_desc("FILE"), cl::init("-"),
                             cl::cat(category));
cl::opt<std::string> builtin("builtin",
                             cl::desc("Write a built-in profile (cpu-here, "
                                      "a100, h100, h200) without measuring"),
                             cl::value_desc("NAME"), cl::cat(category));
cl::opt<std::string> target("target",
                            cl::desc("cpu (default) or cuda (a GPU build on a "
                                     "GPU machine)"),
                            cl::init("cpu"), cl::cat(category));
cl::opt<bool> quick("quick", cl::desc("Fewer sizes and repetitions"),
                    cl::cat(category));

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Best time of `reps` runs of `fn` (seconds).
template <typename Fn> double best(int reps, Fn fn) {
  double t = 1e300;
  for (int r = 0; r < reps; ++r) {
    double s = now();
    fn();
    t = std::min(t, now() - s);
  }
  return t;
}

mgrt_memref_f32_3 view3(float *p, int64_t a, int64_t b, int64_t c) {
  mgrt_memref_f32_3 m;
  m.allocated = m.aligned = p;
  m.offset = 0;
  m.sizes[0] = a, m.sizes[1] = b, m.sizes[2] = c;
  m.strides[0] = b * c, m.strides[1] = c, m.strides[2] = 1;
  return m;
}

/// Seconds of one [n x n] @ [n x n] product.
double gemmSeconds(int64_t n, int reps) {
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  mgrt_memref_f32_3 ma = view3(a.data(), 1, n, n),
                    mb = view3(b.data(), 1, n, n),
                    mc = view3(c.data(), 1, n, n);
  _mlir_ciface_mgrt_matmul_f32(&mc, &ma, &mb); // warm-up
  return best(reps, [&] { _mlir_ciface_mgrt_matmul_f32(&mc, &ma, &mb); });
}

/// FLOP/s of the fused attention forward at B, S, D, H.
double attentionRate(int64_t B, int64_t S, int64_t D, int64_t H, int reps) {
  std::vector<float> q(B * S * D, 0.1f), k(B * S * D, 0.2f), v(B * S * D, 0.3f),
      o(B * S * D);
  mgrt_memref_f32_3 mq = view3(q.data(), B, S, D),
                    mk = view3(k.data(), B, S, D),
                    mv = view3(v.data(), B, S, D),
                    mo = view3(o.data(), B, S, D);
  float scale = 1.0f / std::sqrt(static_cast<float>(D / H));
  auto run = [&] {
    _mlir_ciface_mgrt_attention_f32(&mo, &mq, &mk, &mv, nullptr, nullptr, H,
                                    scale, 0);
  };
  run();
  double t = best(reps, run);
  return 4.0 * B * S * S * D / t;
}

double maxOverRanks(double v) {
  if (!mgrt_comm_initialized())
    return v;
  double out = 0;
  mgrt_comm_all_reduce(mgrt_comm_world(), &v, &out, 1, MGRT_F64, MGRT_COMM_MAX);
  return out;
}

/// The message of the synchronisation measurement: 64 KiB, a block of
/// K and V that a ring step moves, past the shared-memory transport's
/// eager limit (a rendezvous needs both ranks on a core at once).
constexpr int64_t kSyncMessageFloats = 16384;

/// Seconds a synchronisation costs beyond the work between two, when the
/// `ranks` ranks of this node outnumber its `cores` (0 otherwise): every
/// rank computes bursts on one thread and, in one run,
/// passes a 64 KiB message around the ring after each (a ring step); the
/// slowest rank's extra time per burst. Time-shared cores make a transfer
/// wait until both of its ranks have a core.
double syncLatency(int ranks, int64_t cores, int reps) {
  if (ranks <= cores)
    return 0;
  // A burst of one thread's work (about 0.5 ms), as a rank with one
  // kernel thread computes between two transfers.
  volatile double sink = 0;
  auto work = [&] {
    double x = 1.0;
    for (int i = 0; i < 400000; ++i)
      x = x * 1.0000001 + 1e-9;
    sink = sink + x;
  };
  const int bursts = 200;
  mgrt_comm_group *world = mgrt_comm_world();
  const int me = mgrt_comm_rank(world);
  std::vector<float> send(kSyncMessageFloats, 1.0f), recv(kSyncMessageFloats);
  auto loop = [&](bool sync) {
    mgrt_comm_barrier(world);
    const double start = now();
    for (int i = 0; i < bursts; ++i) {
      work();
      if (sync)
        mgrt_comm_sendrecv(world, send.data(), kSyncMessageFloats,
                           (me + 1) % ranks, recv.data(), kSyncMessageFloats,
                           (me + ranks - 1) % ranks, MGRT_F32, 7);
    }
    return maxOverRanks(now() - start);
  };
  double free = 1e300, synced = 1e300;
  for (int r = 0; r < std::max(2, reps / 2); ++r) {
    free = std::min(free, loop(false));
    synced = std::min(synced, loop(true));
  }
  return std::max(0.0, (synced - free) / bursts);
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  for (auto &entry : cl::getRegisteredOptions())
    if (!is_contained(entry.second->Categories, &category) &&
        entry.first != "help")
      entry.second->setHiddenFlag(cl::Hidden);
  cl::ParseCommandLineOptions(
      argc, argv,
      "MegaGraph: measure this machine for the plan search\n\n"
      "  megagraph-profile --out profile.json\n"
      "  mpirun -np 4 megagraph-profile --out profile.json  (collectives)\n"
      "  megagraph-profile --builtin h100 --out h100.json\n");

  auto write = [&](const json::Value &v) {
    std::error_code ec;
    raw_fd_ostream os(outFile, ec, sys::fs::OF_Text);
    if (ec) {
      errs() << "megagraph-profile: error: cannot write '" << outFile
             << "': " << ec.message() << "\n";
      return 1;
    }
    os << formatv("{0:2}", v) << "\n";
    return 0;
  };

  if (!builtin.empty()) {
    HardwareProfile p;
    if (!megagraph::getBuiltinProfile(builtin, p)) {
      errs() << "megagraph-profile: error: unknown built-in profile '"
             << builtin << "' (cpu-here, a100, h100, h200)\n";
      return 1;
    }
    return write(megagraph::toJSON(p));
  }
  if (target == "cuda") {
    errs() << "megagraph-profile: error: --target cuda measures a GPU with "
              "the CUDA runtime; this build has no CUDA runtime in "
              "megagraph-profile (use --builtin a100|h100|h200)\n";
    return 2;
  }
  if (target != "cpu") {
    errs() << "megagraph-profile: error: --target must be cpu or cuda\n";
    return 1;
  }

  // Compute is the node's rate: rank 0's kernels take a thread per core
  // (under mpirun the runtime would give each rank its share of them).
  if (!std::getenv("MEGAGRAPH_NUM_THREADS"))
    setenv("MEGAGRAPH_NUM_THREADS",
           std::to_string(std::max(1u, std::thread::hardware_concurrency()))
               .c_str(),
           1);
  const bool launched = mgrt_comm_launched();
  if (launched && mgrt_comm_init(&argc, &argv) != 0) {
    errs() << "megagraph-profile: error: MPI initialization failed\n";
    return 1;
  }
  const int ranks = launched ? mgrt_comm_size(mgrt_comm_world()) : 1;
  const int rank = launched ? mgrt_comm_rank(mgrt_comm_world()) : 0;
  const int reps = quick ? 2 : 5;

  HardwareProfile p;
  p.name = "measured-cpu";
  p.target = "cpu";
  p.sharedCompute = true;
  p.overlap = false;
  p.devicesPerNode = std::max(ranks, 1);
  json::Array gemmCurve;
  // Compute, on rank 0 (the others wait in the first collective below).
  if (rank == 0) {
    std::vector<int64_t> sizes =
        quick ? std::vector<int64_t>{32, 128, 512}
              : std::vector<int64_t>{32, 64, 128, 256, 512, 1024};
    double large = 0, small = 0;
    for (int64_t n : sizes) {
      double t = gemmSeconds(n, reps);
      double rate = 2.0 * n * n * n / t;
      gemmCurve.push_back(json::Object{{"n", n}, {"flops", rate}});
      if (n < 64)
        small = std::max(small, rate);
      large = std::max(large, rate);
    }
    p.gemmFlops = large;
    p.smallGemmFlops = small > 0 ? small : large;
    p.attentionFlops =
        attentionRate(4, quick ? 128 : 256, 128, 8, std::max(1, reps / 2));
    // Memory bandwidth: copies of 64 MiB (read + write).
    {
      const size_t bytes = size_t(64) << 20;
      std::vector<char> a(bytes, 1), b(bytes);
      double t = best(reps, [&] { std::memcpy(b.data(), a.data(), bytes); });
      p.memoryBandwidth = 2.0 * bytes / t;
    }
    // Per-op overhead: a 1 x 1 product.
    p.opOverhead = gemmSeconds(1, 20);
  }
  // The kernels' workspace: what a GEMM allocates through the runtime.
  {
    size_t before = mgrt_current_bytes();
    mgrt_reset_peak();
    gemmSeconds(256, 1);
    p.scratchBytes = static_cast<int64_t>(mgrt_peak_bytes() - before);
  }
  p.deviceMemory = 0;
  p.coresPerNode = std::max(1u, std::thread::hardware_concurrency());
  // Collectives: all-reduce per group size, alpha-beta by two sizes.
  json::Array groups;
  if (launched && ranks > 1) {
    const int64_t smallCount = 256, largeCount = quick ? (1 << 20) : (4 << 20);
    std::vector<float> send(largeCount, 1.0f), recv(largeCount);
    for (int64_t g = 2; g <= ranks; g *= 2) {
      if (ranks % g)
        continue;
      int64_t shape[2] = {ranks / g, g};
      mgrt_comm_group *group = nullptr;
      if (mgrt_comm_grid_group(2, shape, 2u, &group) != 0)
        continue;
      auto timeOf = [&](int64_t count) {
        double t = best(reps, [&] {
          mgrt_comm_all_reduce(group, send.data(), recv.data(), count, MGRT_F32,
                               MGRT_COMM_SUM);
        });
        return maxOverRanks(t);
      };
      double ts = timeOf(smallCount), tl = timeOf(largeCount);
      double n = static_cast<double>(g);
      megagraph::AlphaBeta ab;
      ab.alpha = ts / (2 * (n - 1));
      ab.beta = std::max(
          0.0, (tl - ts) / (2 * (n - 1) / n * 4.0 * (largeCount - smallCount)));
      p.allReduceByGroup.push_back({g, ab});
      groups.push_back(json::Object{{"group", g},
                                    {"small_bytes", 4 * smallCount},
                                    {"small_s", ts},
                                    {"large_bytes", 4 * largeCount},
                                    {"large_s", tl}});
      mgrt_comm_group_free(group);
      p.intra = ab; // the largest group measured
    }
    p.inter = p.intra;
    p.syncLatency = syncLatency(ranks, p.coresPerNode, reps);
  } else {
    // One process: the built-in CPU profile's shared-memory numbers.
    HardwareProfile here;
    megagraph::getBuiltinProfile("cpu-here", here);
    p.intra = p.inter = here.intra;
  }
  int rc = 0;
  if (rank == 0) {
    json::Value v = megagraph::toJSON(p);
    v.getAsObject()->insert({"ranks", ranks});
    v.getAsObject()->insert({"gemm_curve", std::move(gemmCurve)});
    v.getAsObject()->insert({"all_reduce_measurements", std::move(groups)});
    rc = write(v);
  }
  if (launched)
    mgrt_comm_finalize();
  return rc;
}
