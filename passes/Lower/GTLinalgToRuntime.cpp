//===- GTLinalgToRuntime.cpp - Heavy linalg ops to runtime calls -*- C++ -*-//
//
// Part of MegaGraph. After bufferization, replaces f32 `linalg.batch_matmul`
// whose accumulator was just zero-filled (what tosa.matmul lowers to) with a
// call to the runtime's BLAS-backed `mgrt_matmul_f32`, which overwrites its
// output. Generated loops stay for everything else. The zero fill is erased
// with the matmul, so the rewrite is exact: `fill(0); C += A B` == `C = A B`.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace megagraph {
#define GEN_PASS_DEF_GTLINALGTORUNTIME
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-linalg-to-runtime"

using namespace mlir;
using namespace megagraph;

namespace {

constexpr StringLiteral kMatmulKernel = MGRT_KERNEL_MATMUL;

/// A rank-3 f32 memref of dynamic sizes and strides: what the kernel takes.
MemRefType stridedDynamic(MLIRContext *ctx) {
  SmallVector<int64_t> dyn(3, ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(ctx, ShapedType::kDynamic, dyn);
  return MemRefType::get(dyn, Float32Type::get(ctx), layout);
}

/// Returns the linalg.fill that zeroes `buffer` right before `op` (only ops
/// without memory writes in between), or null.
linalg::FillOp zeroFillBefore(Operation *op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs().front() != buffer)
        return nullptr;
      FloatAttr value;
      if (matchPattern(fill.getInputs().front(), m_Constant(&value)) &&
          value.getValue().isZero())
        return fill;
      return nullptr;
    }
    if (!isMemoryEffectFree(prev))
      return nullptr;
  }
  return nullptr;
}

struct GTLinalgToRuntimePass
    : megagraph::impl::GTLinalgToRuntimeBase<GTLinalgToRuntimePass> {
  using GTLinalgToRuntimeBase::GTLinalgToRuntimeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    MemRefType argType = stridedDynamic(ctx);
    func::FuncOp kernel;
    // 1. Collect the matmuls to replace.
    SmallVector<std::pair<linalg::BatchMatmulOp, linalg::FillOp>> work;
    module.walk([&](linalg::BatchMatmulOp mm) {
      if (!mm.hasPureBufferSemantics() || mm.getNumDpsInputs() != 2)
        return;
      Value out = mm.getDpsInits().front();
      auto outType = cast<MemRefType>(out.getType());
      if (!outType.getElementType().isF32())
        return;
      for (Value in : mm.getDpsInputs())
        if (!cast<MemRefType>(in.getType()).getElementType().isF32())
          return;
      // Only the default (non-transposed, non-broadcast) indexing maps.
      if (mm.hasUserDefinedMaps())
        return;
      if (linalg::FillOp fill = zeroFillBefore(mm, out))
        work.push_back({mm, fill});
    });
    if (work.empty())
      return;
    // 2. Declare the kernel once.
    OpBuilder builder(ctx);
    builder.setInsertionPointToStart(module.getBody());
    kernel = module.lookupSymbol<func::FuncOp>(kMatmulKernel);
    if (!kernel) {
      kernel = func::FuncOp::create(
          builder, module.getLoc(), kMatmulKernel,
          builder.getFunctionType({argType, argType, argType}, {}));
      kernel.setPrivate();
      kernel->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
    }
    // 3. Replace fill + matmul by the call.
    for (auto [mm, fill] : work) {
      builder.setInsertionPoint(mm);
      Location loc = mm.getLoc();
      auto cast = [&](Value v) {
        return memref::CastOp::create(builder, loc, argType, v).getResult();
      };
      Value out = cast(mm.getDpsInits().front());
      Value a = cast(mm.getDpsInputs()[0]);
      Value b = cast(mm.getDpsInputs()[1]);
      func::CallOp::create(builder, loc, kernel, ValueRange{out, a, b});
      mm.erase();
      fill.erase();
      ++numMatmuls;
    }
  }
};

} // namespace
