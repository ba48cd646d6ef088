//===- CpuTarget.cpp - The host CPU target --------------------------------===//
//
// Part of MegaGraph. See megagraph/Target/CpuTarget.h. The lowering is a
// fixed upstream pipeline around MegaGraph's passes (lower-cpu);
// gt.attention bufferizes into the runtime's fused kernel
// (GTBufferizableOpInterfaceImpl.cpp). Allocations go through
// `_mlir_memref_to_llvm_alloc/free`, which the runtime routes to its
// tracked allocator, so peak memory covers every buffer.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Target/CpuTarget.h"

#include "megagraph/Pipelines/Pipelines.h"

using namespace mlir;
using namespace megagraph;

namespace {

/// --target cpu: host loops; entries are called directly.
class CpuTargetBackend final : public TargetBackend {
public:
  explicit CpuTargetBackend(const CpuTargetOptions &options)
      : options(options) {}

  llvm::StringRef getName() const override { return "cpu"; }

  void buildLowerPipeline(OpPassManager &pm,
                          const CompileOptions &common) const override {
    LowerPipelineOptions lower;
    lower.referenceAttention = common.referenceAttention;
    lower.precision = common.precision;
    lower.emulateGpu = options.emulateGpuOnHost;
    buildLowerPassPipeline(pm, lower, /*cuda=*/false);
  }

private:
  CpuTargetOptions options;
};

} // namespace

std::unique_ptr<TargetBackend>
megagraph::createCpuTargetBackend(const CpuTargetOptions &options) {
  return std::make_unique<CpuTargetBackend>(options);
}
