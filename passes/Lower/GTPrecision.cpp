//===- GTPrecision.cpp - GEMMs and attention in BF16 ----------------------===//
//
// Part of MegaGraph. Mixed precision as a renaming of runtime calls (see
// Passes.td): the BF16 kernels keep the float32 operand contract and round
// internally, so the only change to the program is which kernel it calls,
// and everything around the heavy kernels (master weights, optimizer,
// statistics) stays float32 by construction.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace megagraph {
#define GEN_PASS_DEF_GTPRECISION
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-precision"

using namespace mlir;
using namespace megagraph;

namespace {

/// Runtime kernels and their BF16 versions (same operands).
constexpr std::pair<StringLiteral, StringLiteral> kBf16Kernels[] = {
    {MGRT_KERNEL_MATMUL, MGRT_KERNEL_MATMUL_BF16},
    {MGRT_KERNEL_ATTENTION, MGRT_KERNEL_ATTENTION_BF16},
    {MGRT_KERNEL_ATTENTION_BWD, MGRT_KERNEL_ATTENTION_BWD_BF16},
    {MGRT_KERNEL_ATTENTION_LSE, MGRT_KERNEL_ATTENTION_LSE_BF16},
    {MGRT_KERNEL_ATTENTION_BWD_LSE, MGRT_KERNEL_ATTENTION_BWD_LSE_BF16},
};

/// Attention kernels without a BF16 version: the precision asked for
/// cannot be honoured.
constexpr StringLiteral kNoBf16[] = {
    MGRT_KERNEL_CP_ATTENTION,
    MGRT_KERNEL_CP_ATTENTION_BWD,
    MGRT_KERNEL_SPARSE_ATTENTION,
    MGRT_KERNEL_ATTENTION_SPATIAL,
    MGRT_KERNEL_ATTENTION_SPATIAL_BWD,
    MGRT_KERNEL_CP_ATTENTION_SPATIAL,
    MGRT_KERNEL_CP_ATTENTION_SPATIAL_BWD,
};

struct GTPrecisionPass : megagraph::impl::GTPrecisionBase<GTPrecisionPass> {
  using GTPrecisionBase::GTPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (precision == "fp32")
      return;
    if (precision != "bf16") {
      module.emitError("gt-precision: precision must be fp32 or bf16, got '")
          << precision << "'";
      return signalPassFailure();
    }
    // 1. Calls that have no BF16 version.
    WalkResult refused = module.walk([&](func::CallOp call) {
      if (llvm::is_contained(kNoBf16, call.getCallee())) {
        call.emitError() << "runtime call @" << call.getCallee()
                         << " has no bf16 version yet; compile this model "
                            "with --precision fp32";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (refused.wasInterrupted())
      return signalPassFailure();
    // 2. The others are renamed, declarations and calls alike.
    MLIRContext *ctx = module.getContext();
    for (auto [fp32, bf16] : kBf16Kernels) {
      auto decl = module.lookupSymbol<func::FuncOp>(fp32);
      if (!decl)
        continue;
      if (failed(SymbolTable::replaceAllSymbolUses(
              decl, StringAttr::get(ctx, bf16), module))) {
        decl.emitError("gt-precision: cannot rename @") << fp32;
        return signalPassFailure();
      }
      decl.setSymName(bf16);
      ++numCalls;
    }
  }
};

} // namespace
