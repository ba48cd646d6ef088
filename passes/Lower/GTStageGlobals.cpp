//===- GTStageGlobals.cpp - Each pipeline rank's own state ------*- C++ -*-===//
//
// Part of MegaGraph. A pipelined program (`gt.plan` with pp > 1) is one
// module for every rank: its mutable globals are every stage's parameters,
// ZeRO shards and optimizer moments, and each rank runs only its stage's
// entries. As static storage every rank would hold all of them. Here, on
// the LLVM dialect, every function's address of a mutable global becomes
// the storage the runtime gives it (mgrt_stage_global, megagraph/Runtime.h):
// a copy of the global's initial bytes made on first use. A rank thus
// materialises only the globals its stage's entries read or write; the
// static globals keep the initial values (the driver's state table still
// names them, and the driver finds their storage from there).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "megagraph/Passes/GlobalAddressCalls.h"

#include "megagraph/Dialect/GT/GTAttrs.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

#include "megagraph/Support/ModelNames.h"

namespace megagraph {
#define GEN_PASS_DEF_GTSTAGEGLOBALS
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-stage-globals"

using namespace mlir;
using namespace megagraph;

namespace {

struct GTStageGlobalsPass
    : megagraph::impl::GTStageGlobalsBase<GTStageGlobalsPass> {
  using GTStageGlobalsBase::GTStageGlobalsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto plan = module->getAttrOfType<gt::PlanAttr>("gt.plan");
    if (!plan || plan.getPp() <= 1)
      return;
    // The mutable globals' addresses in functions, with their bytes.
    const DataLayout layout(module);
    SmallVector<std::pair<LLVM::AddressOfOp, int64_t>> addresses;
    WalkResult walk = module.walk([&](LLVM::AddressOfOp op) -> WalkResult {
      if (!op->getParentOfType<LLVM::LLVMFuncOp>())
        return WalkResult::advance();
      auto global = dyn_cast_or_null<LLVM::GlobalOp>(
          SymbolTable::lookupNearestSymbolFrom(op, op.getGlobalNameAttr()));
      if (!global || global.getConstant())
        return WalkResult::advance();
      if (!global.getValueOrNull() && global.getInitializerRegion().empty()) {
        op.emitError("gt-stage-globals: mutable global @")
            << global.getSymName() << " has no storage in this module";
        return WalkResult::interrupt();
      }
      addresses.push_back(
          {op, static_cast<int64_t>(layout.getTypeSize(global.getType()))});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    redirectGlobalAddresses(module, MGRT_STAGE_GLOBAL, addresses);
    numGlobals += addresses.size();
  }
};

} // namespace
