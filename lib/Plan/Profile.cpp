//===- Profile.cpp - Hardware profiles of the plan search -----------------===//
//
// Built-in profiles. GPUs: data-sheet peaks (f32 training runs as TF32 on
// the tensor cores) times a sustained fraction (GEMM 60 %, fused attention
// 40 %, elementwise 80 % of HBM), NVLink per direction inside a node of 8,
// one InfiniBand NIC per GPU across nodes. The CPU profile is what
// `megagraph-profile` measured on the 2-core development machine (see
// docs/plan_search.md); re-measure with `megagraph-profile --out FILE`.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Plan/Profile.h"

#include "megagraph/ByteCount.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace megagraph;
using llvm::StringRef;

double HardwareProfile::computeShare(int64_t ranksOnNode) const {
  if (!sharedCompute || ranksOnNode <= 1)
    return 1.0;
  return 1.0 / static_cast<double>(ranksOnNode);
}

int64_t HardwareProfile::threadsPerRank(int64_t ranksOnNode) const {
  if (!sharedCompute || coresPerNode <= 0)
    return 0;
  return std::max<int64_t>(1, coresPerNode / std::max<int64_t>(1, ranksOnNode));
}

bool HardwareProfile::oversubscribed(int64_t ranksOnNode) const {
  return sharedCompute && coresPerNode > 0 && ranksOnNode > coresPerNode;
}

double HardwareProfile::aloneSpeedup(int64_t ranksOnNode) const {
  if (!oversubscribed(ranksOnNode))
    return 1.0;
  // Alone, a rank's threads get a core each: threads / cores of the node,
  // against 1 / ranks when every rank is busy.
  return static_cast<double>(threadsPerRank(ranksOnNode)) /
         static_cast<double>(coresPerNode) / computeShare(ranksOnNode);
}

double HardwareProfile::rankScratchBytes(int64_t ranksOnNode) const {
  const int64_t alone = threadsPerRank(1);
  if (alone <= 0)
    return static_cast<double>(scratchBytes);
  return static_cast<double>(scratchBytes) *
         static_cast<double>(threadsPerRank(ranksOnNode)) /
         static_cast<double>(alone);
}

double HardwareProfile::gemmRate(double m, double k, double n) const {
  if (gemmCurve.empty())
    return std::min({m, k, n}) >= 64 ? gemmFlops : smallGemmFlops;
  // A skinny product runs about as fast as the square one whose size is the
  // geometric mean of its two largest dimensions (the smallest one only
  // limits how often the packed panels are reused).
  const double lo = std::min({m, k, n});
  const double size = std::sqrt(std::max(1.0, m * k * n / std::max(1.0, lo)));
  if (size <= gemmCurve.front().first)
    return gemmCurve.front().second;
  if (size >= gemmCurve.back().first)
    return gemmCurve.back().second;
  for (size_t i = 1; i < gemmCurve.size(); ++i) {
    const double n0 = gemmCurve[i - 1].first, n1 = gemmCurve[i].first;
    if (size > n1)
      continue;
    const double f0 = gemmCurve[i - 1].second, f1 = gemmCurve[i].second;
    const double t = std::log(size / n0) / std::log(n1 / n0);
    return std::exp(std::log(f0) + t * (std::log(f1) - std::log(f0)));
  }
  return gemmCurve.back().second;
}

double HardwareProfile::allReduce(int64_t group, double bytes) const {
  if (group <= 1 || bytes <= 0)
    return 0;
  const AlphaBeta &ab = group <= devicesPerNode ? intra : inter;
  double n = static_cast<double>(group);
  // Ring: 2 (n - 1) steps, each moving bytes / n.
  return 2 * (n - 1) * ab.alpha + 2 * (n - 1) / n * bytes * ab.beta;
}

double HardwareProfile::allGather(int64_t group, double bytes) const {
  if (group <= 1 || bytes <= 0)
    return 0;
  const AlphaBeta &ab = group <= devicesPerNode ? intra : inter;
  double n = static_cast<double>(group);
  return (n - 1) * ab.alpha + (n - 1) / n * bytes * ab.beta;
}

double HardwareProfile::sendRecv(double bytes, bool crossNode) const {
  const AlphaBeta &ab = crossNode ? inter : intra;
  return ab.alpha + bytes * ab.beta;
}

namespace {

HardwareProfile gpu(StringRef name, double tf32, double hbm, double memory,
                    double nvlinkPerDirection, double ibPerGpu) {
  HardwareProfile p;
  p.name = name.str();
  p.target = "cuda";
  p.gemmFlops = 0.6 * tf32;
  p.attentionFlops = 0.4 * tf32;
  p.smallGemmFlops = 0.1 * tf32;
  p.memoryBandwidth = 0.8 * hbm;
  p.opOverhead = 5e-6;
  p.deviceMemory = static_cast<int64_t>(memory);
  p.scratchBytes = 64ll << 20; // cuBLAS workspace and NCCL buffers
  p.attentionRowBlock = 64;
  p.devicesPerNode = 8;
  p.sharedCompute = false;
  p.intra = {5e-6, 1.0 / nvlinkPerDirection};
  p.inter = {10e-6, 1.0 / ibPerGpu};
  return p;
}

HardwareProfile cpuHere() {
  // `mpirun -np 4 megagraph-profile` on the development machine (2 cores
  // of an AVX-512 Zen 5, OpenBLAS, Open MPI over shared memory),
  // 2026-12-06; see docs/plan_search.md. The per-op overhead, the
  // workspace and alpha/beta are the 2026-11-30 values: the profile's
  // 1 x 1 product and back-to-back all-reduces measure less than a
  // compiled step's op and collective cost.
  HardwareProfile p;
  p.name = "cpu-here";
  p.target = "cpu";
  p.gemmFlops = 124e9;
  p.attentionFlops = 148e9;
  p.smallGemmFlops = 45e9;
  p.memoryBandwidth = 41e9;
  p.opOverhead = 4e-6;
  p.gemmCurve = {{32, 44e9},   {64, 45e9},   {128, 91e9},
                 {256, 113e9}, {512, 124e9}, {1024, 129e9}};
  p.deviceMemory = 24ll << 30;
  // 2 kernel threads x 4 * (120 * 128 + 512 * 128 + 120 * 512) bytes.
  p.scratchBytes = 1138688;
  p.devicesPerNode = 1024; // one host: every group uses shared memory
  p.sharedCompute = true;
  p.coresPerNode = 2;
  p.syncLatency = 23e-6;
  p.overlap = false;
  p.intra = {20e-6, 1.0 / 2e9};
  p.inter = p.intra;
  return p;
}

} // namespace

std::vector<std::string> megagraph::builtinProfileNames() {
  return {"cpu-here", "a100", "h100", "h200"};
}

bool megagraph::getBuiltinProfile(StringRef name, HardwareProfile &profile) {
  std::string n = name.lower();
  if (n == "cpu-here" || n == "cpu")
    profile = cpuHere();
  else if (n == "a100") // SXM4 80 GB: TF32 156 TFLOP/s, 2.04 TB/s, NVLink3
    profile = gpu("a100", 156e12, 2.039e12, 80e9, 300e9, 25e9);
  else if (n == "h100") // SXM5 80 GB: TF32 495 TFLOP/s, 3.35 TB/s, NVLink4
    profile = gpu("h100", 494.7e12, 3.35e12, 80e9, 450e9, 50e9);
  else if (n == "h200") // SXM 141 GB: H100's compute, 4.8 TB/s HBM3e
    profile = gpu("h200", 494.7e12, 4.8e12, 141e9, 450e9, 50e9);
  else
    return false;
  return true;
}

llvm::Expected<HardwareProfile> megagraph::loadProfile(StringRef nameOrFile) {
  HardwareProfile profile;
  if (getBuiltinProfile(nameOrFile, profile))
    return profile;
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError("--profile " + nameOrFile + ": " + why);
  };
  auto buffer = llvm::MemoryBuffer::getFile(nameOrFile);
  if (!buffer)
    return fail("neither a built-in profile (" +
                llvm::join(builtinProfileNames(), ", ") +
                ") nor a readable file");
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail("invalid JSON: " + llvm::toString(json.takeError()));
  llvm::json::Path::Root root;
  if (!fromJSON(*json, profile, root))
    return fail("not a hardware profile: " + llvm::toString(root.getError()));
  if (profile.gemmFlops <= 0 || profile.memoryBandwidth <= 0)
    return fail("gemm_flops and memory_bandwidth must be positive");
  if (profile.attentionFlops <= 0)
    profile.attentionFlops = profile.gemmFlops;
  if (profile.smallGemmFlops <= 0)
    profile.smallGemmFlops = profile.gemmFlops;
  return profile;
}

llvm::json::Value megagraph::toJSON(const HardwareProfile &p) {
  llvm::json::Array groups;
  for (const auto &[group, ab] : p.allReduceByGroup)
    groups.push_back(llvm::json::Object{
        {"group", group}, {"alpha_s", ab.alpha}, {"beta_s_per_byte", ab.beta}});
  llvm::json::Object o{
      {"name", p.name},
      {"target", p.target},
      {"gemm_flops", p.gemmFlops},
      {"attention_flops", p.attentionFlops},
      {"small_gemm_flops", p.smallGemmFlops},
      {"memory_bandwidth", p.memoryBandwidth},
      {"op_overhead_s", p.opOverhead},
      {"device_memory", p.deviceMemory},
      {"scratch_bytes", p.scratchBytes},
      {"devices_per_node", p.devicesPerNode},
      {"shared_compute", p.sharedCompute},
      {"cores", p.coresPerNode},
      {"sync_latency_s", p.syncLatency},
      {"attention_row_block", p.attentionRowBlock},
      {"overlap", p.overlap},
      {"intra", llvm::json::Object{{"alpha_s", p.intra.alpha},
                                   {"beta_s_per_byte", p.intra.beta}}},
      {"inter", llvm::json::Object{{"alpha_s", p.inter.alpha},
                                   {"beta_s_per_byte", p.inter.beta}}},
      {"all_reduce_by_group", std::move(groups)}};
  // (megagraph-profile adds the curve it measured itself.)
  if (!p.gemmCurve.empty()) {
    llvm::json::Array curve;
    for (const auto &[n, flops] : p.gemmCurve)
      curve.push_back(llvm::json::Object{{"n", n}, {"flops", flops}});
    o["gemm_curve"] = std::move(curve);
  }
  return o;
}

static bool fromJSON(const llvm::json::Value &value, AlphaBeta &ab,
                     llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  return o && o.map("alpha_s", ab.alpha) && o.map("beta_s_per_byte", ab.beta);
}

bool megagraph::fromJSON(const llvm::json::Value &value, HardwareProfile &p,
                         llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  if (!o || !o.map("gemm_flops", p.gemmFlops) ||
      !o.map("memory_bandwidth", p.memoryBandwidth))
    return false;
  o.mapOptional("name", p.name);
  o.mapOptional("target", p.target);
  o.mapOptional("attention_flops", p.attentionFlops);
  o.mapOptional("small_gemm_flops", p.smallGemmFlops);
  o.mapOptional("op_overhead_s", p.opOverhead);
  if (const llvm::json::Array *curve =
          value.getAsObject()->getArray("gemm_curve")) {
    p.gemmCurve.clear();
    for (const llvm::json::Value &point : *curve) {
      llvm::json::ObjectMapper c(point, path.field("gemm_curve"));
      int64_t n = 0;
      double flops = 0;
      if (!c || !c.map("n", n) || !c.map("flops", flops))
        return false;
      if (n > 0 && flops > 0)
        p.gemmCurve.push_back({n, flops});
    }
    std::sort(p.gemmCurve.begin(), p.gemmCurve.end());
  }
  o.mapOptional("device_memory", p.deviceMemory);
  o.mapOptional("scratch_bytes", p.scratchBytes);
  o.mapOptional("devices_per_node", p.devicesPerNode);
  o.mapOptional("shared_compute", p.sharedCompute);
  o.mapOptional("cores", p.coresPerNode);
  o.mapOptional("sync_latency_s", p.syncLatency);
  o.mapOptional("attention_row_block", p.attentionRowBlock);
  o.mapOptional("overlap", p.overlap);
  if (const llvm::json::Value *v = value.getAsObject()->get("intra"))
    if (!::fromJSON(*v, p.intra, path.field("intra")))
      return false;
  p.inter = p.intra;
  if (const llvm::json::Value *v = value.getAsObject()->get("inter"))
    if (!::fromJSON(*v, p.inter, path.field("inter")))
      return false;
  if (const llvm::json::Array *groups =
          value.getAsObject()->getArray("all_reduce_by_group"))
    for (const llvm::json::Value &g : *groups) {
      const llvm::json::Object *obj = g.getAsObject();
      AlphaBeta ab;
      if (!obj || !::fromJSON(g, ab, path.field("all_reduce_by_group")))
        return false;
      p.allReduceByGroup.push_back({obj->getInteger("group").value_or(0), ab});
    }
  if (p.devicesPerNode < 1)
    p.devicesPerNode = 1;
  return true;
}

bool megagraph::parseByteCount(StringRef text, int64_t &bytes) {
  double b;
  if (!mgrt_byte_count_parse(text.str().c_str(), &b) || b >= 9.2e18)
    return false;
  bytes = static_cast<int64_t>(std::llround(b));
  return true;
}

std::string megagraph::formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u ? "%.2f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}
