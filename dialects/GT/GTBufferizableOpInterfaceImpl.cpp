//===- GTBufferizableOpInterfaceImpl.cpp - Bufferize gt kernels -*- C++ -*-===//
//
// Part of MegaGraph. One-shot bufferization of the gt ops that have a fused
// runtime kernel (C interface, see runtime/include/megagraph/Runtime.h): the
// op becomes an allocation of its result plus a call to the kernel.
//   gt.attention         mgrt_attention_f32: blockwise online softmax, never
//                        materializes the [H, Sq, Sk] scores; an absent bias
//                        or mask is a 1x1x1x1 placeholder and a flag bit.
//   gt.attention_lse     mgrt_attention_lse_f32: the same, plus the row
//                        log-sum-exp as a second result.
//   gt.attention_grad    mgrt_attention_bwd_f32: recomputes the scores
//                        block by block; allocates dq, dk, dv and (with a
//                        bias) dbias of the bias's own shape, which the
//                        kernel sums over the broadcast dimensions (flag
//                        bit 2); absent bias/mask are placeholders as above.
//                        With out and lse, mgrt_attention_bwd_lse_f32, which
//                        skips the statistics pass.
//   ... spatial(d, t)    the three attention ops with a spatial bias call
//                        mgrt_attention_spatial_f32 (lse: a placeholder and
//                        flag bit 8 clear for gt.attention) and
//                        mgrt_attention_spatial_bwd_f32 (dtable [V,H] added
//                        after dbias; out and lse placeholders unless given,
//                        flag bit 8); the distance must be i16 (gt-decompose
//                        narrows it) and is passed as [Db, Sq, Sk].
//   ... gt.cp            context parallel: mgrt_cp_attention_f32 / _bwd_f32,
//                        with a spatial bias mgrt_cp_attention_spatial_f32 /
//                        _bwd_f32 (no out / lse operands), the operands as
//                        above plus the grid, axes, mode and seq.
//   gt.spmm              mgrt_spmm_f32
//   gt.spmm_linear       mgrt_moa_spmm_linear_f32: aggregate and result
//                        allocated; absent scale / bias are one-element
//                        placeholders and flag bits 0 / 1.
//   gt.linear_spmm       mgrt_moa_linear_spmm_f32: the same operands and
//                        flags, transformed and result allocated.
//   gt.csr_transpose     mgrt_csr_transpose
//   gt.sparse_attention  mgrt_sparse_attention_f32: online softmax over each
//                        row's edges; an absent edge_bias is a 1x1
//                        placeholder and flag bit 0.
// Operands are passed as identity-layout memrefs of dynamic shape. CSR
// indices (row_ptr, col_idx) are passed as i64; narrower integers are first
// sign-extended into a new i64 buffer by an scf.for loop.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTBufferization.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTMoaOps.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/RuntimeMoa.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::bufferization;
using namespace megagraph;

namespace {

/// Names of the runtime kernels (the C symbol is `_mlir_ciface_` + this).
constexpr StringLiteral kAttentionKernel = MGRT_KERNEL_ATTENTION;
constexpr StringLiteral kAttentionBwdKernel = MGRT_KERNEL_ATTENTION_BWD;
constexpr StringLiteral kAttentionLseKernel = MGRT_KERNEL_ATTENTION_LSE;
constexpr StringLiteral kAttentionBwdLseKernel = MGRT_KERNEL_ATTENTION_BWD_LSE;
constexpr StringLiteral kAttentionSpatialKernel = MGRT_KERNEL_ATTENTION_SPATIAL;
constexpr StringLiteral kAttentionSpatialBwdKernel =
    MGRT_KERNEL_ATTENTION_SPATIAL_BWD;
constexpr StringLiteral kSpmmKernel = MGRT_KERNEL_SPMM;
constexpr StringLiteral kHaloSpmmKernel = MGRT_KERNEL_HALO_SPMM;
constexpr StringLiteral kMoaSpmmLinearKernel = MGRT_KERNEL_MOA_SPMM_LINEAR;
constexpr StringLiteral kMoaLinearSpmmKernel = MGRT_KERNEL_MOA_LINEAR_SPMM;
constexpr StringLiteral kHaloMoaSpmmLinearKernel =
    MGRT_KERNEL_HALO_MOA_SPMM_LINEAR;
constexpr StringLiteral kHaloMoaLinearSpmmKernel =
    MGRT_KERNEL_HALO_MOA_LINEAR_SPMM;
constexpr StringLiteral kMopMoaSpmmLinearKernel =
    MGRT_KERNEL_MOP_MOA_SPMM_LINEAR;
constexpr StringLiteral kMopMoaLinearSpmmKernel =
    MGRT_KERNEL_MOP_MOA_LINEAR_SPMM;
constexpr StringLiteral kCsrTransposeKernel = MGRT_KERNEL_CSR_TRANSPOSE;
constexpr StringLiteral kSparseAttentionKernel = MGRT_KERNEL_SPARSE_ATTENTION;

/// Whether `op` is context parallel (`gt.cp` of gt-context-parallel).
bool isContextParallel(Operation *op) {
  return op->hasAttr(gt::kContextParallelAttr);
}

/// Context parallel: the cp kernel's extra arguments g0, g1, g2, g3, axes,
/// mode, seq (RuntimeCp.h) appended to `args`, and the cp version of the
/// single-process kernel `name` (dense or spatial attention, forward or
/// backward); `name` itself without `gt.cp`.
StringRef contextParallel(RewriterBase &rewriter, Operation *op, StringRef name,
                          SmallVectorImpl<Value> &args) {
  auto cp =
      op->getAttrOfType<gt::ContextParallelAttr>(gt::kContextParallelAttr);
  if (!cp)
    return name;
  for (int64_t g : cp.getGrid())
    args.push_back(arith::ConstantIntOp::create(rewriter, op->getLoc(), g, 64));
  for (int64_t value : {cp.getAxes(), cp.getMode(), cp.getSeq()})
    args.push_back(
        arith::ConstantIntOp::create(rewriter, op->getLoc(), value, 64));
  if (name == kAttentionSpatialKernel)
    return MGRT_KERNEL_CP_ATTENTION_SPATIAL;
  if (name == kAttentionSpatialBwdKernel)
    return MGRT_KERNEL_CP_ATTENTION_SPATIAL_BWD;
  return name == kAttentionKernel ? MGRT_KERNEL_CP_ATTENTION
                                  : MGRT_KERNEL_CP_ATTENTION_BWD;
}

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

/// Gives `buffer` rank `rank` by prepending unit dimensions (after making
/// its layout the identity, so the expanded type is the identity too).
Value toRank(RewriterBase &rewriter, Location loc, Value buffer, int64_t rank) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getRank() < rank) {
    buffer = toIdentity(rewriter, loc, buffer);
    type = cast<MemRefType>(buffer.getType());
  }
  int64_t missing = rank - type.getRank();
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

Value toRank4(RewriterBase &rewriter, Location loc, Value buffer) {
  return toRank(rewriter, loc, buffer, 4);
}

/// The distance and table buffers of a spatial attention op, as the spatial
/// kernels take them: i16 [Db, Sq, Sk] and f32 [V, H].
FailureOr<std::pair<Value, Value>>
spatialOperands(RewriterBase &rewriter, Operation *op, Value distance,
                Value table, const BufferizationOptions &options,
                BufferizationState &state) {
  if (!cast<RankedTensorType>(distance.getType())
           .getElementType()
           .isInteger(16))
    return op->emitOpError("the CPU spatial attention kernels take i16 "
                           "distances (gt-decompose narrows them)");
  FailureOr<Value> d = getBuffer(rewriter, distance, options, state);
  FailureOr<Value> t = getBuffer(rewriter, table, options, state);
  if (failed(d) || failed(t))
    return failure();
  Location loc = op->getLoc();
  return std::make_pair(
      toDynamicIdentity(rewriter, loc, toRank(rewriter, loc, *d, 3)),
      toDynamicIdentity(rewriter, loc, *t));
}

/// A [1, 1, 1] f32 placeholder for an absent rank-3 operand.
Value placeholder3(RewriterBase &rewriter, Location loc) {
  return toDynamicIdentity(
      rewriter, loc,
      memref::AllocaOp::create(
          rewriter, loc, MemRefType::get({1, 1, 1}, rewriter.getF32Type())));
}

/// Declares the kernel `name` in the module once.
func::FuncOp getOrDeclareKernel(RewriterBase &rewriter, Operation *from,
                                StringRef name, FunctionType type) {
  auto module = from->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(rewriter, from->getLoc(), name, type);
  fn.setPrivate();
  fn->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
  return fn;
}

/// Casts the operands to their C-interface types, declares `name` once and
/// calls it.
void callKernel(RewriterBase &rewriter, Operation *op, StringRef name,
                ArrayRef<Value> args) {
  SmallVector<Type> argTypes;
  for (Value a : args)
    argTypes.push_back(a.getType());
  func::FuncOp kernel = getOrDeclareKernel(
      rewriter, op, name, rewriter.getFunctionType(argTypes, {}));
  func::CallOp::create(rewriter, op->getLoc(), kernel, args);
}

/// Shared parts of the models of ops that read every operand and allocate
/// their result.
template <typename Model, typename Op>
struct KernelCallModel : BufferizableOpInterface::ExternalModel<Model, Op> {
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
};

/// gt.attention -> mgrt_attention_f32(out, q, k, v, bias, mask, num_heads,
/// scale, flags); gt.attention_lse -> mgrt_attention_lse_f32(out, lse, q, k,
/// v, ...), the same plus the [B, H, Sq] row log-sum-exp.
template <typename AttnOp>
struct AttentionOpInterface
    : KernelCallModel<AttentionOpInterface<AttnOp>, AttnOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto attn = cast<AttnOp>(op);
    constexpr bool withLse = std::is_same_v<AttnOp, gt::AttentionLseOp>;
    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(attn.getResult().getType());
    if (!resultType.getElementType().isF32())
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
      flags |= MGRT_ATTENTION_BIAS;
    } else {
      bias = memref::AllocaOp::create(rewriter, loc,
                                      MemRefType::get({1, 1, 1, 1}, f32));
    }
    if (Value m = attn.getMask()) {
      FailureOr<Value> buf = bufferOf(m);
      if (failed(buf))
        return failure();
      mask = toRank4(rewriter, loc, *buf);
      flags |= MGRT_ATTENTION_MASK;
    } else {
      mask = memref::AllocaOp::create(rewriter, loc,
                                      MemRefType::get({1, 1, 1, 1}, i1));
    }
    SmallVector<Value> results;
    for (Value r : op->getResults()) {
      auto type = cast<RankedTensorType>(r.getType());
      if (!type.hasStaticShape())
        return op->emitOpError("needs static shapes to bufferize");
      results.push_back(memref::AllocOp::create(
          rewriter, loc, MemRefType::get(type.getShape(), f32)));
    }
    SmallVector<Value> args;
    for (Value r : results)
      args.push_back(toDynamicIdentity(rewriter, loc, r));
    const bool spatial = static_cast<bool>(attn.getSpatialTable());
    // mgrt_attention_spatial_f32 takes lse too (its cp version does not).
    if (spatial && !withLse && !isContextParallel(op))
      args.push_back(placeholder3(rewriter, loc));
    for (Value operand : {*q, *k, *v, bias, mask})
      args.push_back(toDynamicIdentity(rewriter, loc, operand));
    if (spatial) {
      FailureOr<std::pair<Value, Value>> dt =
          spatialOperands(rewriter, op, attn.getSpatialDistance(),
                          attn.getSpatialTable(), options, state);
      if (failed(dt))
        return failure();
      args.append({dt->first, dt->second});
      if (withLse)
        flags |= MGRT_ATTENTION_LSE;
    }
    args.append(
        {arith::ConstantIntOp::create(
             rewriter, loc, static_cast<int64_t>(attn.getNumHeads()), 64),
         arith::ConstantFloatOp::create(
             rewriter, loc, rewriter.getF32Type(),
             APFloat(static_cast<float>(attn.getScaleOrDefault()))),
         arith::ConstantIntOp::create(rewriter, loc, flags, 64)});
    StringRef kernel =
        contextParallel(rewriter, op,
                        spatial   ? StringRef(kAttentionSpatialKernel)
                        : withLse ? StringRef(kAttentionLseKernel)
                                  : StringRef(kAttentionKernel),
                        args);
    callKernel(rewriter, op, kernel, args);
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

/// Checks what the sparse kernels need: f32 data, static shapes, CSR
/// indices of at most 64 bits.
LogicalResult checkSparseOp(Operation *op, StringRef what, Value rowPtr,
                            Value colIdx) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType.getElementType().isF32())
    return op->emitOpError("the CPU ") << what << " kernel supports f32 only";
  for (Type t : op->getOperandTypes())
    if (!cast<RankedTensorType>(t).hasStaticShape())
      return op->emitOpError("needs static shapes to bufferize");
  if (!resultType.hasStaticShape())
    return op->emitOpError("needs static shapes to bufferize");
  for (Value v : {rowPtr, colIdx}) {
    unsigned width = cast<RankedTensorType>(v.getType())
                         .getElementType()
                         .getIntOrFloatBitWidth();
    if (width < 2 || width > 64)
      return op->emitOpError("CSR indices must be integers of 2 to 64 bits, "
                             "got i")
             << width;
  }
  return success();
}

/// The buffer of a rank-1 CSR index operand as an identity-layout
/// memref<?xi64>: narrower integers are sign-extended into a new buffer.
FailureOr<Value> csrIndices(RewriterBase &rewriter, Location loc, Value tensor,
                            const BufferizationOptions &options,
                            BufferizationState &state) {
  FailureOr<Value> buf = getBuffer(rewriter, tensor, options, state);
  if (failed(buf))
    return failure();
  auto type = cast<MemRefType>(buf->getType());
  Type i64 = rewriter.getI64Type();
  if (type.getElementType() == i64)
    return toDynamicIdentity(rewriter, loc, *buf);
  Value wide = memref::AllocOp::create(rewriter, loc,
                                       MemRefType::get(type.getShape(), i64));
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value size =
      arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(0));
  auto loop = scf::ForOp::create(rewriter, loc, zero, size, one);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(loop.getBody());
    Value iv = loop.getInductionVar();
    Value narrow = memref::LoadOp::create(rewriter, loc, *buf, iv);
    Value ext = arith::ExtSIOp::create(rewriter, loc, i64, narrow);
    memref::StoreOp::create(rewriter, loc, ext, wide, iv);
  }
  return toDynamicIdentity(rewriter, loc, wide);
}

/// gt.spmm -> mgrt_spmm_f32(out, row_ptr, col_idx, values, x).
struct SpmmOpInterface : KernelCallModel<SpmmOpInterface, gt::SpmmOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto spmm = cast<gt::SpmmOp>(op);
    Location loc = op->getLoc();
    if (failed(checkSparseOp(op, "spmm", spmm.getRowPtr(), spmm.getColIdx())))
      return failure();
    FailureOr<Value> rowPtr =
        csrIndices(rewriter, loc, spmm.getRowPtr(), options, state);
    FailureOr<Value> colIdx =
        csrIndices(rewriter, loc, spmm.getColIdx(), options, state);
    FailureOr<Value> values =
        getBuffer(rewriter, spmm.getValues(), options, state);
    FailureOr<Value> x = getBuffer(rewriter, spmm.getInput(), options, state);
    if (failed(rowPtr) || failed(colIdx) || failed(values) || failed(x))
      return failure();
    auto resultType = cast<RankedTensorType>(spmm.getType());
    Value out = memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get(resultType.getShape(), resultType.getElementType()));
    SmallVector<Value> args = {toDynamicIdentity(rewriter, loc, out), *rowPtr,
                               *colIdx,
                               toDynamicIdentity(rewriter, loc, *values),
                               toDynamicIdentity(rewriter, loc, *x)};
    // Partition parallelism: this rank's row block, with the halo exchange
    // over the grid [parts, 1, 1, 1].
    StringRef kernel = kSpmmKernel;
    if (auto halo = op->getAttrOfType<gt::HaloAttr>(gt::kHaloAttr)) {
      for (int64_t g :
           {halo.getParts(), int64_t(1), int64_t(1), int64_t(1), int64_t(1)})
        args.push_back(arith::ConstantIntOp::create(rewriter, loc, g, 64));
      kernel = kHaloSpmmKernel;
    }
    callKernel(rewriter, op, kernel, args);
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};

/// gt.spmm_linear -> mgrt_moa_spmm_linear_f32(out, aggregate, row_ptr,
/// col_idx, values, x, scale, weight, bias, chunks, flags) and gt.linear_spmm
/// -> mgrt_moa_linear_spmm_f32(out, transformed, ...) with the same operands;
/// an absent scale (flag bit 0) or bias (bit 1) is a one-element placeholder.
/// With #gt.halo, the mgrt_halo_moa_* kernels with the grid appended; with
/// gt.mop_switch, the mgrt_mop_moa_* kernels with the grid appended.
template <typename MoaOp>
struct MoaOpInterface : KernelCallModel<MoaOpInterface<MoaOp>, MoaOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto fused = cast<MoaOp>(op);
    constexpr bool linearFirst = std::is_same_v<MoaOp, gt::LinearSpmmOp>;
    Location loc = op->getLoc();
    if (failed(checkSparseOp(op, linearFirst ? "linear_spmm" : "spmm_linear",
                             fused.getRowPtr(), fused.getColIdx())))
      return failure();
    FailureOr<Value> rowPtr =
        csrIndices(rewriter, loc, fused.getRowPtr(), options, state);
    FailureOr<Value> colIdx =
        csrIndices(rewriter, loc, fused.getColIdx(), options, state);
    FailureOr<Value> values =
        getBuffer(rewriter, fused.getValues(), options, state);
    FailureOr<Value> x = getBuffer(rewriter, fused.getInput(), options, state);
    FailureOr<Value> weight =
        getBuffer(rewriter, fused.getWeight(), options, state);
    if (failed(rowPtr) || failed(colIdx) || failed(values) || failed(x) ||
        failed(weight))
      return failure();
    Type f32 = rewriter.getF32Type();
    auto optional =
        [&](Value v, ArrayRef<int64_t> placeholderShape) -> FailureOr<Value> {
      if (!v)
        return toDynamicIdentity(
            rewriter, loc,
            memref::AllocaOp::create(rewriter, loc,
                                     MemRefType::get(placeholderShape, f32)));
      FailureOr<Value> buf = getBuffer(rewriter, v, options, state);
      if (failed(buf))
        return failure();
      return toDynamicIdentity(rewriter, loc, *buf);
    };
    FailureOr<Value> scale = optional(fused.getScale(), {1, 1});
    FailureOr<Value> bias = optional(fused.getBias(), {1});
    if (failed(scale) || failed(bias))
      return failure();
    SmallVector<Value> outs;
    for (Value r : {op->getResult(1), op->getResult(0)}) { // result, first
      auto type = cast<RankedTensorType>(r.getType());
      outs.push_back(memref::AllocOp::create(
          rewriter, loc,
          MemRefType::get(type.getShape(), type.getElementType())));
    }
    const int64_t flags =
        (fused.getScale() ? 1 : 0) | (fused.getBias() ? 2 : 0);
    SmallVector<Value> args = {
        toDynamicIdentity(rewriter, loc, outs[0]),
        toDynamicIdentity(rewriter, loc, outs[1]),
        *rowPtr,
        *colIdx,
        toDynamicIdentity(rewriter, loc, *values),
        toDynamicIdentity(rewriter, loc, *x),
        *scale,
        toDynamicIdentity(rewriter, loc, *weight),
        *bias,
        arith::ConstantIntOp::create(rewriter, loc, fused.getChunks(), 64),
        arith::ConstantIntOp::create(rewriter, loc, flags, 64)};
    // Partition parallelism: this rank's row block, with the halo exchange
    // over the grid [parts, 1, 1, 1] (as gt.spmm's); mixture of
    // parallelism: the switch's all-to-all over the same grid (gt-mixture-
    // parallel's 1-D @gt_mop).
    StringRef kernel =
        linearFirst ? kMoaLinearSpmmKernel : kMoaSpmmLinearKernel;
    auto halo = op->getAttrOfType<gt::HaloAttr>(gt::kHaloAttr);
    auto mop = op->getAttrOfType<gt::HaloAttr>(gt::kMopSwitchAttr);
    if (halo || mop) {
      const int64_t parts = halo ? halo.getParts() : mop.getParts();
      for (int64_t g : {parts, int64_t(1), int64_t(1), int64_t(1), int64_t(1)})
        args.push_back(arith::ConstantIntOp::create(rewriter, loc, g, 64));
      kernel = mop ? (linearFirst ? kMopMoaLinearSpmmKernel
                                  : kMopMoaSpmmLinearKernel)
                   : (linearFirst ? kHaloMoaLinearSpmmKernel
                                  : kHaloMoaSpmmLinearKernel);
    }
    callKernel(rewriter, op, kernel, args);
    replaceOpWithBufferizedValues(rewriter, op, {outs[1], outs[0]});
    return success();
  }
};

/// gt.csr_transpose -> mgrt_csr_transpose(row_ptr_t, col_idx_t, perm,
/// row_ptr (no entries for COO), col_idx).
struct CsrTransposeOpInterface
    : KernelCallModel<CsrTransposeOpInterface, gt::CsrTransposeOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto t = cast<gt::CsrTransposeOp>(op);
    Location loc = op->getLoc();
    for (Type type : op->getOperandTypes())
      if (!cast<RankedTensorType>(type).hasStaticShape())
        return op->emitOpError("needs static shapes to bufferize");
    FailureOr<Value> colIdx =
        csrIndices(rewriter, loc, t.getColIdx(), options, state);
    if (failed(colIdx))
      return failure();
    Type i64 = rewriter.getI64Type();
    Value rowPtr;
    if (Value rp = t.getRowPtr()) {
      FailureOr<Value> buf = csrIndices(rewriter, loc, rp, options, state);
      if (failed(buf))
        return failure();
      rowPtr = *buf;
    } else {
      rowPtr = toDynamicIdentity(
          rewriter, loc,
          memref::AllocaOp::create(rewriter, loc, MemRefType::get({0}, i64)));
    }
    SmallVector<Value> outs, args;
    for (Value r : op->getResults()) {
      auto type = cast<RankedTensorType>(r.getType());
      outs.push_back(memref::AllocOp::create(
          rewriter, loc, MemRefType::get(type.getShape(), i64)));
      args.push_back(toDynamicIdentity(rewriter, loc, outs.back()));
    }
    args.append({rowPtr, *colIdx});
    callKernel(rewriter, op, kCsrTransposeKernel, args);
    replaceOpWithBufferizedValues(rewriter, op, outs);
    return success();
  }
};

/// gt.sparse_attention -> mgrt_sparse_attention_f32(out, q, k, v, row_ptr,
/// col_idx, edge_bias, num_heads, scale, flags).
struct SparseAttentionOpInterface
    : KernelCallModel<SparseAttentionOpInterface, gt::SparseAttentionOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto attn = cast<gt::SparseAttentionOp>(op);
    Location loc = op->getLoc();
    if (failed(checkSparseOp(op, "sparse attention", attn.getRowPtr(),
                             attn.getColIdx())))
      return failure();
    auto bufferOf = [&](Value v) -> FailureOr<Value> {
      return getBuffer(rewriter, v, options, state);
    };
    FailureOr<Value> q = bufferOf(attn.getQuery()), k = bufferOf(attn.getKey()),
                     v = bufferOf(attn.getValue());
    if (failed(q) || failed(k) || failed(v))
      return failure();
    FailureOr<Value> rowPtr =
        csrIndices(rewriter, loc, attn.getRowPtr(), options, state);
    FailureOr<Value> colIdx =
        csrIndices(rewriter, loc, attn.getColIdx(), options, state);
    if (failed(rowPtr) || failed(colIdx))
      return failure();
    FloatType f32 = rewriter.getF32Type();
    int64_t flags = 0;
    Value bias;
    if (Value b = attn.getEdgeBias()) {
      FailureOr<Value> buf = bufferOf(b);
      if (failed(buf))
        return failure();
      bias = *buf;
      flags |= 1;
    } else {
      bias =
          memref::AllocaOp::create(rewriter, loc, MemRefType::get({1, 1}, f32));
    }
    auto resultType = cast<RankedTensorType>(attn.getType());
    Value out = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(resultType.getShape(), f32));
    // Default scale: 1 / sqrt(D / H) (shapes are static here).
    auto heads = static_cast<int64_t>(attn.getNumHeads());
    double scale =
        attn.getScaleAttr()
            ? attn.getScaleAttr().getValueAsDouble()
            : 1.0 / std::sqrt(static_cast<double>(
                        cast<RankedTensorType>(attn.getQuery().getType())
                            .getDimSize(1) /
                        heads));
    SmallVector<Value> args = {
        toDynamicIdentity(rewriter, loc, out),
        toDynamicIdentity(rewriter, loc, *q),
        toDynamicIdentity(rewriter, loc, *k),
        toDynamicIdentity(rewriter, loc, *v),
        *rowPtr,
        *colIdx,
        toDynamicIdentity(rewriter, loc, bias),
        arith::ConstantIntOp::create(rewriter, loc, heads, 64),
        arith::ConstantFloatOp::create(rewriter, loc, f32,
                                       APFloat(static_cast<float>(scale))),
        arith::ConstantIntOp::create(rewriter, loc, flags, 64)};
    callKernel(rewriter, op, kSparseAttentionKernel, args);
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};

/// gt.attention_grad -> mgrt_attention_bwd_f32(dq, dk, dv, dbias, dout, q, k,
/// v, bias, mask, num_heads, scale, flags); with out and lse,
/// mgrt_attention_bwd_lse_f32(..., mask, out, lse, num_heads, scale, flags).
struct AttentionGradOpInterface
    : KernelCallModel<AttentionGradOpInterface, gt::AttentionGradOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto grad = cast<gt::AttentionGradOp>(op);
    Location loc = op->getLoc();
    for (Type t : op->getResultTypes()) {
      auto tensor = cast<RankedTensorType>(t);
      if (!tensor.getElementType().isF32())
        return op->emitOpError(
            "the CPU attention backward kernel supports f32 only");
      if (!tensor.hasStaticShape())
        return op->emitOpError("needs static shapes to bufferize");
    }
    auto bufferOf = [&](Value v) -> FailureOr<Value> {
      return getBuffer(rewriter, v, options, state);
    };
    FailureOr<Value> dout = bufferOf(grad.getDout()),
                     q = bufferOf(grad.getQuery()), k = bufferOf(grad.getKey()),
                     v = bufferOf(grad.getValue());
    if (failed(dout) || failed(q) || failed(k) || failed(v))
      return failure();
    int64_t flags = 0;
    Type f32 = rewriter.getF32Type(), i1 = rewriter.getI1Type();
    Value bias, mask, dbias, dbias4;
    if (Value b = grad.getBias()) {
      FailureOr<Value> buf = bufferOf(b);
      if (failed(buf))
        return failure();
      bias = toRank4(rewriter, loc, *buf);
      dbias = memref::AllocOp::create(
          rewriter, loc,
          MemRefType::get(cast<RankedTensorType>(b.getType()).getShape(), f32));
      dbias4 = toRank4(rewriter, loc, dbias);
      flags |= MGRT_ATTENTION_BIAS | MGRT_ATTENTION_DBIAS;
    } else {
      bias = memref::AllocaOp::create(rewriter, loc,
                                      MemRefType::get({1, 1, 1, 1}, f32));
      dbias4 = memref::AllocaOp::create(rewriter, loc,
                                        MemRefType::get({1, 1, 1, 1}, f32));
    }
    if (Value m = grad.getMask()) {
      FailureOr<Value> buf = bufferOf(m);
      if (failed(buf))
        return failure();
      mask = toRank4(rewriter, loc, *buf);
      flags |= MGRT_ATTENTION_MASK;
    } else {
      mask = memref::AllocaOp::create(rewriter, loc,
                                      MemRefType::get({1, 1, 1, 1}, i1));
    }
    auto alloc = [&](Value like) -> Value {
      return memref::AllocOp::create(
          rewriter, loc,
          MemRefType::get(cast<RankedTensorType>(like.getType()).getShape(),
                          f32));
    };
    Value dq = alloc(grad.getQuery()), dk = alloc(grad.getKey()),
          dv = alloc(grad.getValue());
    auto dyn = [&](Value buffer) {
      return toDynamicIdentity(rewriter, loc, buffer);
    };
    const bool spatial = static_cast<bool>(grad.getSpatialTable());
    Value dtable = spatial ? alloc(grad.getSpatialTable()) : Value();
    SmallVector<Value> args = {dyn(dq), dyn(dk), dyn(dv), dyn(dbias4)};
    if (spatial)
      args.push_back(dyn(dtable));
    args.append({dyn(*dout), dyn(*q), dyn(*k), dyn(*v), dyn(bias), dyn(mask)});
    if (spatial) {
      FailureOr<std::pair<Value, Value>> dt =
          spatialOperands(rewriter, op, grad.getSpatialDistance(),
                          grad.getSpatialTable(), options, state);
      if (failed(dt))
        return failure();
      args.append({dt->first, dt->second});
    }
    // The forward's out and lse, when given, replace the statistics pass.
    if (grad.getOut()) {
      FailureOr<Value> out = bufferOf(grad.getOut()),
                       lse = bufferOf(grad.getLse());
      if (failed(out) || failed(lse))
        return failure();
      args.append({dyn(*out), dyn(*lse)});
      if (spatial)
        flags |= MGRT_ATTENTION_LSE;
    } else if (spatial && !isContextParallel(op)) {
      args.append({placeholder3(rewriter, loc), placeholder3(rewriter, loc)});
    }
    args.append(
        {arith::ConstantIntOp::create(
             rewriter, loc, static_cast<int64_t>(grad.getNumHeads()), 64),
         arith::ConstantFloatOp::create(
             rewriter, loc, rewriter.getF32Type(),
             APFloat(static_cast<float>(grad.getScaleOrDefault()))),
         arith::ConstantIntOp::create(rewriter, loc, flags, 64)});
    // (The verifier keeps out and lse off context-parallel gradients.)
    StringRef kernel =
        contextParallel(rewriter, op,
                        spatial         ? StringRef(kAttentionSpatialBwdKernel)
                        : grad.getOut() ? StringRef(kAttentionBwdLseKernel)
                                        : StringRef(kAttentionBwdKernel),
                        args);
    callKernel(rewriter, op, kernel, args);
    SmallVector<Value> results = {dq, dk, dv};
    if (dbias)
      results.push_back(dbias);
    if (dtable)
      results.push_back(dtable);
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

} // namespace

void megagraph::gt::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gt::GTDialect *) {
    ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                     memref::MemRefDialect, scf::SCFDialect>();
    gt::AttentionOp::attachInterface<AttentionOpInterface<gt::AttentionOp>>(
        *ctx);
    gt::AttentionLseOp::attachInterface<
        AttentionOpInterface<gt::AttentionLseOp>>(*ctx);
    gt::AttentionGradOp::attachInterface<AttentionGradOpInterface>(*ctx);
    gt::SpmmOp::attachInterface<SpmmOpInterface>(*ctx);
    gt::SpmmLinearOp::attachInterface<MoaOpInterface<gt::SpmmLinearOp>>(*ctx);
    gt::LinearSpmmOp::attachInterface<MoaOpInterface<gt::LinearSpmmOp>>(*ctx);
    gt::CsrTransposeOp::attachInterface<CsrTransposeOpInterface>(*ctx);
    gt::SparseAttentionOp::attachInterface<SparseAttentionOpInterface>(*ctx);
  });
}
