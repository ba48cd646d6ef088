//===- GTGpuDeviceMemory.cpp - Host buffers and globals on the GPU -*- C++ -*-//
//
// Part of MegaGraph. The host half of `--target cuda` (see Passes.td): after
// the LLVM lowering, the step's allocations go to the runtime's device
// allocator and the host functions see the device copies of the module's
// globals (listed by gt-gpu-offload in `gt.device_globals`).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "megagraph/Passes/GlobalAddressCalls.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace megagraph {
#define GEN_PASS_DEF_GTGPUDEVICEMEMORY
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-gpu-device-memory"

using namespace mlir;
using namespace megagraph;

namespace {

constexpr std::pair<StringLiteral, StringLiteral> kAllocators[] = {
    {"_mlir_memref_to_llvm_alloc", "mgrt_cuda_memref_alloc"},
    {"_mlir_memref_to_llvm_aligned_alloc", "mgrt_cuda_memref_aligned_alloc"},
    {"_mlir_memref_to_llvm_free", "mgrt_cuda_memref_free"},
};

constexpr StringLiteral kGlobal = "mgrt_cuda_global";

struct GTGpuDeviceMemoryPass
    : megagraph::impl::GTGpuDeviceMemoryBase<GTGpuDeviceMemoryPass> {
  using GTGpuDeviceMemoryBase::GTGpuDeviceMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto globals =
        module->getAttrOfType<gt::DeviceGlobalsAttr>(gt::kDeviceGlobalsAttr);
    if (!globals) {
      module.emitError("gt-gpu-device-memory: no `gt.device_globals` (run "
                       "gt-gpu-offload before the LLVM lowering)");
      return signalPassFailure();
    }
    // 1. Allocation functions.
    for (auto [host, device] : kAllocators) {
      auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(host);
      if (!fn)
        continue;
      if (module.lookupSymbol(device)) {
        fn.emitError("gt-gpu-device-memory: @") << device << " already exists";
        return signalPassFailure();
      }
      if (failed(SymbolTable::replaceAllSymbolUses(
              fn, StringAttr::get(ctx, device), module)))
        return signalPassFailure();
      fn.setSymName(device);
    }
    // 2. Global addresses in host functions.
    SmallVector<std::pair<LLVM::AddressOfOp, int64_t>> addresses;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      fn.walk([&](LLVM::AddressOfOp op) {
        if (std::optional<int64_t> bytes = globals.lookup(op.getGlobalName()))
          addresses.push_back({op, *bytes});
      });
    redirectGlobalAddresses(module, kGlobal, addresses);
    numGlobals += addresses.size();
  }
};

} // namespace
