//===- CudaTarget.cpp - The NVIDIA GPU target -----------------------------===//
//
// Part of MegaGraph. See megagraph/Target/CudaTarget.h. lower-cuda puts the
// kernels into the object file as PTX; every entry runs through
// mgrt_cuda_run_entry, which copies host tensors to the device and back,
// and the executable links libmegagraph_cuda (megagraph_cuda.link, written
// by runtime/cuda/CMakeLists.txt next to the runtime archive), with the
// NCCL backend for multi-GPU plans (megagraph_cuda_nccl.link).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Target/CudaTarget.h"

#include "megagraph/ModelABI.h"
#include "megagraph/Pipelines/Pipelines.h"

#include "llvm/Support/FileSystem.h"

using namespace mlir;
using namespace megagraph;

namespace {

/// --target cuda: kernels as PTX, entries staged on the device.
class CudaTargetBackend final : public TargetBackend {
public:
  explicit CudaTargetBackend(const CudaTargetOptions &options)
      : options(options) {}

  llvm::StringRef getName() const override { return "cuda"; }

  void buildLowerPipeline(OpPassManager &pm,
                          const CompileOptions &common) const override {
    LowerPipelineOptions lower;
    lower.referenceAttention = common.referenceAttention;
    lower.precision = common.precision;
    lower.chip = options.chip;
    lower.cudaPath = options.cudaPath;
    buildLowerPassPipeline(pm, lower, /*cuda=*/true);
  }

  llvm::StringRef getEntryStagingFunction() const override {
    return MGRT_CUDA_RUN_ENTRY;
  }

  LogicalResult getRuntimeLinkFiles(const CompileOptions &common,
                                    std::vector<std::string> &files,
                                    std::string &error) const override {
    std::string file = common.runtimeLibDir + "/megagraph_cuda.link";
    if (!llvm::sys::fs::exists(file)) {
      error = "--target cuda needs the CUDA runtime (megagraph_cuda.link in " +
              common.runtimeLibDir +
              "); build MegaGraph with CUDA (MEGAGRAPH_ENABLE_CUDA=ON, nvcc "
              "found) or pass --runtime-dir";
      return failure();
    }
    files.push_back(file);
    // The NCCL backend and the multi-GPU calls; a one-GPU program pulls
    // nothing from them (and needs no libnccl).
    std::string nccl = common.runtimeLibDir + "/megagraph_cuda_nccl.link";
    if (llvm::sys::fs::exists(nccl)) {
      files.push_back(nccl);
    } else if (options.multiDevice) {
      error = "a multi-device plan with --target cuda needs the NCCL backend "
              "(megagraph_cuda_nccl.link in " +
              common.runtimeLibDir +
              "); build MegaGraph where CMake finds NCCL "
              "(MEGAGRAPH_ENABLE_NCCL=ON) or use --target cpu";
      return failure();
    }
    return success();
  }

private:
  CudaTargetOptions options;
};

} // namespace

std::unique_ptr<TargetBackend>
megagraph::createCudaTargetBackend(const CudaTargetOptions &options) {
  return std::make_unique<CudaTargetBackend>(options);
}
