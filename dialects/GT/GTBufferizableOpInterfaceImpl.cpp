//===- GTBufferizableOpInterfaceImpl.cpp - Bufferize gt.attention -*- C++ -*-//
//
// Part of MegaGraph. One-shot bufferization of gt.attention: the op becomes
// an allocation of its result plus a call to the fused runtime kernel
// `mgrt_attention_f32` (C interface, see runtime/include/megagraph/
// Runtime.h), which computes attention blockwise with an online softmax and
// never materializes the [H, Sq, Sk] scores. Operands are passed as
// identity-layout memrefs of dynamic shape; an absent bias or mask is a
// 1x1x1x1 placeholder and a flag bit.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTBufferization.h"

#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace megagraph;

namespace {

/// Name of the runtime kernel (the C symbol is `_mlir_ciface_` + this).
constexpr StringLiteral kAttentionKernel = "mgrt_attention_f32";

/// Returns `buffer` with an identity layout, copying it if it is strided.
Value toIdentity(RewriterBase &rewriter, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getLayout().isIdentity())
    return buffer;
  auto identity = MemRefType::get(type.getShape(), type.getElementType());
  SmallVector<Value> dynSizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dynSizes.push_back(memref::DimOp::create(rewriter, loc, buffer, i));
  Value copy = memref::AllocOp::create(rewriter, loc, identity, dynSizes);
  memref::CopyOp::create(rewriter, loc, buffer, copy);
  return copy;
}

/// Returns `buffer` as an identity-layout memref of fully dynamic shape,
/// copying it first if its layout is strided.
Value toDynamicIdentity(RewriterBase &rewriter, Location loc, Value buffer) {
  buffer = toIdentity(rewriter, loc, buffer);
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> dyn(type.getRank(), ShapedType::kDynamic);
  return memref::CastOp::create(
      rewriter, loc, MemRefType::get(dyn, type.getElementType()), buffer);
}

/// Gives `buffer` rank 4 by prepending unit dimensions (after making its
/// layout the identity, so the expanded type is the identity too).
Value toRank4(RewriterBase &rewriter, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getRank() < 4) {
    buffer = toIdentity(rewriter, loc, buffer);
    type = cast<MemRefType>(buffer.getType());
  }
  int64_t missing = 4 - type.getRank();
  if (missing <= 0)
    return buffer;
  SmallVector<int64_t> shape(missing, 1);
  llvm::append_range(shape, type.getShape());
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    ReassociationIndices group;
    if (i == 0)
      for (int64_t j = 0; j < missing; ++j)
        group.push_back(j);
    group.push_back(i + missing);
    reassoc.push_back(group);
  }
  if (type.getRank() == 0)
    return memref::ExpandShapeOp::create(
        rewriter, loc, MemRefType::get(shape, type.getElementType()), buffer,
        ArrayRef<ReassociationIndices>{});
  return memref::ExpandShapeOp::create(
      rewriter, loc, MemRefType::get(shape, type.getElementType()), buffer,
      reassoc);
}

/// Declares the kernel in the module once.
func::FuncOp getOrDeclareKernel(RewriterBase &rewriter, Operation *from,
                                FunctionType type) {
  auto module = from->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<func::FuncOp>(kAttentionKernel))
    return fn;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  auto fn =
      func::FuncOp::create(rewriter, from->getLoc(), kAttentionKernel, type);
  fn.setPrivate();
  fn->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
  return fn;
}

struct AttentionOpInterface
    : BufferizableOpInterface::ExternalModel<AttentionOpInterface,
                                             gt::AttentionOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto attn = cast<gt::AttentionOp>(op);
    Location loc = op->getLoc();
    if (!attn.getType().getElementType().isF32())
      return op->emitOpError("the CPU attention kernel supports f32 only");
    auto bufferOf = [&](Value v) -> FailureOr<Value> {
      return getBuffer(rewriter, v, options, state);
    };
    FailureOr<Value> q = bufferOf(attn.getQuery()), k = bufferOf(attn.getKey()),
                     v = bufferOf(attn.getValue());
    if (failed(q) || failed(k) || failed(v))
      return failure();
    int64_t flags = 0;
    Type f32 = rewriter.getF32Type(), i1 = rewriter.getI1Type();
    Value bias, mask;
    if (Value b = attn.getBias()) {
      FailureOr<Value> buf = bufferOf(b);
      if (failed(buf))
        return failure();
      bias = toRank4(rewriter, loc, *buf);
      flags |= 1;
    } else {
      bias = memref::AllocaOp::create(rewriter, loc,
                                      MemRefType::get({1, 1, 1, 1}, f32));
    }
    if (Value m = attn.getMask()) {
      FailureOr<Value> buf = bufferOf(m);
      if (failed(buf))
        return failure();
      mask = toRank4(rewriter, loc, *buf);
      flags |= 2;
    } else {
      mask = memref::AllocaOp::create(rewriter, loc,
                                      MemRefType::get({1, 1, 1, 1}, i1));
    }
    auto resultType = cast<RankedTensorType>(attn.getType());
    if (!resultType.hasStaticShape())
      return op->emitOpError("needs static shapes to bufferize");
    Value out = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(resultType.getShape(), f32));
    SmallVector<Value> args = {
        toDynamicIdentity(rewriter, loc, out),
        toDynamicIdentity(rewriter, loc, *q),
        toDynamicIdentity(rewriter, loc, *k),
        toDynamicIdentity(rewriter, loc, *v),
        toDynamicIdentity(rewriter, loc, bias),
        toDynamicIdentity(rewriter, loc, mask),
        arith::ConstantIntOp::create(
            rewriter, loc, static_cast<int64_t>(attn.getNumHeads()), 64),
        arith::ConstantFloatOp::create(
            rewriter, loc, rewriter.getF32Type(),
            APFloat(static_cast<float>(attn.getScaleOrDefault()))),
        arith::ConstantIntOp::create(rewriter, loc, flags, 64)};
    SmallVector<Type> argTypes;
    for (Value a : args)
      argTypes.push_back(a.getType());
    func::FuncOp kernel = getOrDeclareKernel(
        rewriter, op, rewriter.getFunctionType(argTypes, {}));
    func::CallOp::create(rewriter, loc, kernel, args);
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};

} // namespace

void megagraph::gt::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gt::GTDialect *) {
    ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                     memref::MemRefDialect>();
    gt::AttentionOp::attachInterface<AttentionOpInterface>(*ctx);
  });
}
