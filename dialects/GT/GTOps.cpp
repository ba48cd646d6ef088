//===- GTOps.cpp - gt dialect operations ------------------------*- C++ -*-===//
//
// Part of MegaGraph. Verifiers, result-type inference and cost rules of the gt
// ops. Verifiers carry the precise shape checks (they run before the
// InferTypeOpInterface check); inference assumes verified operands and only
// fails, silently, when a rank makes the result unknowable.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTMoaOps.h"
#include "megagraph/Dialect/GT/GTNames.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace megagraph::gt;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

namespace {

/// Two dimensions agree when equal or when either is dynamic.
bool dimsAgree(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

/// `a` broadcasts to `b` when equal, 1, or dynamic.
bool dimBroadcasts(int64_t a, int64_t b) { return a == 1 || dimsAgree(a, b); }

/// Two shapes agree dimension by dimension.
bool shapesAgree(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return a.size() == b.size() && llvm::all_of(llvm::zip(a, b), [](auto pair) {
           return dimsAgree(std::get<0>(pair), std::get<1>(pair));
         });
}

/// Prints a shape as `[2, 128, ?]` for diagnostics.
std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
  }
  return s + "]";
}

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Product of static dims, kUnknownCost if any is dynamic.
int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(d))
      return kUnknownCost;
    p *= d;
  }
  return p;
}

/// Multiplies cost factors, propagating kUnknownCost.
int64_t mulCosts(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors) {
    if (f == kUnknownCost || ShapedType::isDynamic(f))
      return kUnknownCost;
    p *= f;
  }
  return p;
}

/// Emits the "element types must match" error when `types` disagree.
LogicalResult verifySameElementType(Operation *op,
                                    ArrayRef<std::pair<StringRef, Value>> vs) {
  Type first = tensorOf(vs.front().second).getElementType();
  for (auto [name, v] : vs.drop_front()) {
    Type t = tensorOf(v).getElementType();
    if (t != first)
      return op->emitOpError() << "element type of " << name << " (" << t
                               << ") does not match that of "
                               << vs.front().first << " (" << first << ")";
  }
  return success();
}

/// Verifies that the declared result type equals the inferred one (dynamic
/// dims included, as InferTypeOpInterface requires). Used by verifiers so
/// that result errors name the expected shape.
LogicalResult verifyResultType(Operation *op, Type expected) {
  Type actual = op->getResult(0).getType();
  if (actual != expected)
    return op->emitOpError() << "result type " << actual
                             << " does not match the expected " << expected;
  return success();
}

/// The per-head width of an attention over `query` ([B, S, D]) with `heads`
/// heads; dynamic when D is.
int64_t attentionHeadDim(Value query, uint64_t heads) {
  int64_t d = tensorOf(query).getDimSize(2);
  if (ShapedType::isDynamic(d))
    return ShapedType::kDynamic;
  return d / static_cast<int64_t>(heads);
}

/// The score scale of an attention: the `scale` attribute, else
/// 1/sqrt(head width) (1 when the width is dynamic).
double attentionScale(FloatAttr scale, int64_t headDim) {
  if (scale)
    return scale.getValueAsDouble();
  return ShapedType::isDynamic(headDim) ? 1.0 : 1.0 / std::sqrt(headDim);
}

/// The `[B, Sq, Dv]` result type of an attention, or null when query or
/// value is not of rank 3.
RankedTensorType attentionResultType(Value query, Value value) {
  auto q = cast<RankedTensorType>(query.getType());
  auto v = cast<RankedTensorType>(value.getType());
  if (q.getRank() != 3 || v.getRank() != 3)
    return {};
  return RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), v.getDimSize(2)}, q.getElementType());
}

/// Result type `[batch..., H, Sq, Sk]` of the bias encoders.
RankedTensorType biasType(ArrayRef<int64_t> pairShape, int64_t heads,
                          Type elem) {
  SmallVector<int64_t> shape(pairShape.begin(), pairShape.end());
  shape.insert(shape.end() - 2, heads);
  return RankedTensorType::get(shape, elem);
}

} // namespace

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

int64_t AttentionOp::getHeadDim() {
  return attentionHeadDim(getQuery(), getNumHeads());
}

double AttentionOp::getScaleOrDefault() {
  return attentionScale(getScaleAttr(), getHeadDim());
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType result =
      attentionResultType(adaptor.getQuery(), adaptor.getValue());
  if (!result)
    return failure();
  types.push_back(result);
  return success();
}

namespace {

/// The operand checks shared by gt.attention, gt.attention_lse and
/// gt.attention_grad.
LogicalResult verifyAttentionOperands(Operation *op, Value query, Value key,
                                      Value value, Value biasV, Value maskV,
                                      Value distanceV, Value tableV,
                                      int64_t heads) {
  auto emitOpError = [&]() { return op->emitOpError(); };
  RankedTensorType q = tensorOf(query), k = tensorOf(key), v = tensorOf(value);
  if (q.getRank() != 3 || k.getRank() != 3 || v.getRank() != 3)
    return emitOpError() << "expects query, key and value of rank 3 "
                            "([B, S, D]), got ranks "
                         << q.getRank() << ", " << k.getRank() << ", "
                         << v.getRank();
  SmallVector<std::pair<StringRef, Value>> typed = {
      {"query", query}, {"key", key}, {"value", value}};
  if (biasV)
    typed.push_back({"bias", biasV});
  if (tableV)
    typed.push_back({"spatial table", tableV});
  if (failed(verifySameElementType(op, typed)))
    return failure();
  if (!dimsAgree(q.getDimSize(0), k.getDimSize(0)) ||
      !dimsAgree(k.getDimSize(0), v.getDimSize(0)))
    return emitOpError() << "batch sizes of query, key and value differ: "
                         << q.getDimSize(0) << ", " << k.getDimSize(0) << ", "
                         << v.getDimSize(0);
  if (!dimsAgree(q.getDimSize(2), k.getDimSize(2)))
    return emitOpError() << "query hidden size " << q.getDimSize(2)
                         << " differs from key hidden size " << k.getDimSize(2);
  if (!dimsAgree(k.getDimSize(1), v.getDimSize(1)))
    return emitOpError() << "key length " << k.getDimSize(1)
                         << " differs from value length " << v.getDimSize(1);
  for (auto [name, dim] :
       {std::pair<StringRef, int64_t>{"hidden size", q.getDimSize(2)},
        {"value hidden size", v.getDimSize(2)}})
    if (!ShapedType::isDynamic(dim) && dim % heads != 0)
      return emitOpError() << "num_heads (" << heads << ") must divide the "
                           << name << " (" << dim << ")";

  int64_t batch = q.getDimSize(0), sq = q.getDimSize(1), sk = k.getDimSize(1);
  // Context parallel (gt-context-parallel): k holds this rank's S / cp keys
  // (or, with uneven blocks, ceil(S / cp) rows of which its block is a
  // prefix), the bias, mask and spatial distance all S key columns.
  if (auto cp = op->getAttrOfType<ContextParallelAttr>(kContextParallelAttr))
    if (!ShapedType::isDynamic(sk))
      sk = cp.getSeq() > 0 ? cp.getSeq() : sk * cp.getSize();
  if (Value bias = biasV) {
    ArrayRef<int64_t> b = tensorOf(bias).getShape();
    bool ok = false;
    if (b.size() == 3)
      ok = dimsAgree(b[0], heads) && dimsAgree(b[1], sq) && dimsAgree(b[2], sk);
    else if (b.size() == 4)
      ok = dimBroadcasts(b[0], batch) && dimBroadcasts(b[1], heads) &&
           dimsAgree(b[2], sq) && dimsAgree(b[3], sk);
    if (!ok)
      return emitOpError() << "bias must be [H, Sq, Sk] = "
                           << shapeStr({heads, sq, sk})
                           << " or [B|1, H|1, Sq, Sk], got " << shapeStr(b);
  }
  if (Value mask = maskV) {
    ArrayRef<int64_t> m = tensorOf(mask).getShape();
    SmallVector<int64_t> full = {batch, heads, sq, sk};
    bool ok = m.size() >= 2 && m.size() <= 4;
    for (size_t i = 0; ok && i < m.size(); ++i)
      ok = dimBroadcasts(m[m.size() - 1 - i], full[3 - i]);
    if (!ok)
      return emitOpError() << "mask " << shapeStr(m)
                           << " does not broadcast to [B, H, Sq, Sk] = "
                           << shapeStr(full);
  }
  if (static_cast<bool>(distanceV) != static_cast<bool>(tableV))
    return emitOpError() << "takes the spatial distance and table together";
  if (distanceV) {
    // Under cp, as the bias: this rank's query rows, all S key columns.
    ArrayRef<int64_t> d = tensorOf(distanceV).getShape();
    bool ok = (d.size() == 2 && dimsAgree(d[0], sq) && dimsAgree(d[1], sk)) ||
              (d.size() == 3 && dimBroadcasts(d[0], batch) &&
               dimsAgree(d[1], sq) && dimsAgree(d[2], sk));
    if (!ok)
      return emitOpError() << "spatial distance must be [Sq, Sk] or "
                              "[B|1, Sq, Sk] with [B, Sq, Sk] = "
                           << shapeStr({batch, sq, sk}) << ", got "
                           << shapeStr(d);
    ArrayRef<int64_t> t = tensorOf(tableV).getShape();
    if (t.size() != 2 || !dimsAgree(t[1], heads) || t[0] == 0)
      return emitOpError() << "spatial table must be [V, H] with V > 0 and "
                           << "H = " << heads << ", got " << shapeStr(t);
  }
  return success();
}

/// FLOPs of one forward attention.
int64_t attentionFlops(Value query, Value key, Value value, int64_t heads) {
  RankedTensorType q = tensorOf(query), k = tensorOf(key), v = tensorOf(value);
  int64_t scores =
      mulCosts({q.getDimSize(0), q.getDimSize(1), k.getDimSize(1), heads});
  // Q K^T and P V (2 FLOPs per multiply-add) plus scale, bias, mask and the
  // online softmax (about 5 per score).
  int64_t headDims = mulCosts({q.getDimSize(2), 1});
  int64_t valueDims = mulCosts({v.getDimSize(2), 1});
  if (scores == kUnknownCost || headDims == kUnknownCost ||
      valueDims == kUnknownCost)
    return kUnknownCost;
  return scores * (2 * headDims / heads + 2 * valueDims / heads + 5);
}

} // namespace

LogicalResult AttentionOp::verify() {
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     getBias(), getMask(), getSpatialDistance(),
                                     getSpatialTable(),
                                     static_cast<int64_t>(getNumHeads()))))
    return failure();
  return verifyResultType(*this, attentionResultType(getQuery(), getValue()));
}

int64_t AttentionOp::getFlops() {
  return attentionFlops(getQuery(), getKey(), getValue(),
                        static_cast<int64_t>(getNumHeads()));
}

int64_t AttentionOp::getActivationBytes() {
  // Flash-style backward keeps Q, K, V, the output and one log-sum-exp per
  // (b, h, row): never the [H, Sq, Sk] scores. The bias is recomputed or
  // kept by its producer.
  RankedTensorType q = tensorOf(getQuery());
  int64_t lse = mulCosts({q.getDimSize(0), q.getDimSize(1),
                          static_cast<int64_t>(getNumHeads()), 4});
  int64_t bytes = addCosts(getTypeBytes(q), getTypeBytes(getKey().getType()));
  bytes = addCosts(bytes, getTypeBytes(getValue().getType()));
  bytes = addCosts(bytes, getTypeBytes(getResult().getType()));
  return addCosts(bytes, lse);
}

int64_t AttentionOp::getTransientBytes() {
  // One 64-row block of scores per head at a time.
  RankedTensorType q = tensorOf(getQuery()), k = tensorOf(getKey());
  int64_t rows = std::min<int64_t>(64, q.getDimSize(1));
  if (ShapedType::isDynamic(q.getDimSize(1)))
    rows = 64;
  return mulCosts(
      {rows, k.getDimSize(1), static_cast<int64_t>(getNumHeads()), 4});
}

//===----------------------------------------------------------------------===//
// AttentionLseOp
//===----------------------------------------------------------------------===//

namespace {

/// The [B, H, Sq] type of the row log-sum-exp of an attention over `query`.
RankedTensorType lseType(Value query, int64_t heads) {
  auto q = cast<RankedTensorType>(query.getType());
  return RankedTensorType::get({q.getDimSize(0), heads, q.getDimSize(1)},
                               q.getElementType());
}

} // namespace

int64_t AttentionLseOp::getHeadDim() {
  return attentionHeadDim(getQuery(), getNumHeads());
}

double AttentionLseOp::getScaleOrDefault() {
  return attentionScale(getScaleAttr(), getHeadDim());
}

LogicalResult AttentionLseOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location>,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  RankedTensorType result =
      attentionResultType(adaptor.getQuery(), adaptor.getValue());
  if (!result)
    return failure();
  types.push_back(result);
  types.push_back(
      lseType(adaptor.getQuery(), static_cast<int64_t>(adaptor.getNumHeads())));
  return success();
}

LogicalResult AttentionLseOp::verify() {
  const auto heads = static_cast<int64_t>(getNumHeads());
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     getBias(), getMask(), getSpatialDistance(),
                                     getSpatialTable(), heads)))
    return failure();
  if ((*this)->hasAttr(kContextParallelAttr))
    return emitOpError() << "has no context-parallel form";
  RankedTensorType q = tensorOf(getQuery()), v = tensorOf(getValue());
  SmallVector<int64_t> outShape = {q.getDimSize(0), q.getDimSize(1),
                                   v.getDimSize(2)};
  if (!shapesAgree(tensorOf(getResult()).getShape(), outShape))
    return emitOpError() << "result must be " << shapeStr(outShape) << ", got "
                         << shapeStr(tensorOf(getResult()).getShape());
  RankedTensorType want = lseType(getQuery(), heads);
  if (getLse().getType() != want)
    return emitOpError() << "lse must be " << want << " ([B, H, Sq]), got "
                         << getLse().getType();
  return success();
}

int64_t AttentionLseOp::getFlops() {
  return attentionFlops(getQuery(), getKey(), getValue(),
                        static_cast<int64_t>(getNumHeads()));
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

int64_t AttentionGradOp::getHeadDim() {
  return attentionHeadDim(getQuery(), getNumHeads());
}

double AttentionGradOp::getScaleOrDefault() {
  return attentionScale(getScaleAttr(), getHeadDim());
}

LogicalResult AttentionGradOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location>,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getQuery().getType());
  types.push_back(adaptor.getKey().getType());
  types.push_back(adaptor.getValue().getType());
  if (Value bias = adaptor.getBias())
    types.push_back(bias.getType());
  if (Value table = adaptor.getSpatialTable())
    types.push_back(table.getType());
  return success();
}

LogicalResult AttentionGradOp::verify() {
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     getBias(), getMask(), getSpatialDistance(),
                                     getSpatialTable(),
                                     static_cast<int64_t>(getNumHeads()))))
    return failure();
  RankedTensorType q = tensorOf(getQuery()), v = tensorOf(getValue()),
                   d = tensorOf(getDout());
  if (d.getElementType() != q.getElementType())
    return emitOpError() << "element type of dout (" << d.getElementType()
                         << ") does not match that of query ("
                         << q.getElementType() << ")";
  SmallVector<int64_t> outShape = {q.getDimSize(0), q.getDimSize(1),
                                   v.getDimSize(2)};
  if (!shapesAgree(d.getShape(), outShape))
    return emitOpError() << "dout must have the attention result shape "
                         << shapeStr(outShape) << ", got "
                         << shapeStr(d.getShape());
  const size_t biasGrads = (getBias() ? 1 : 0) + (getSpatialTable() ? 1 : 0);
  if (getBiasGrads().size() != biasGrads)
    return emitOpError() << "has " << 3 + biasGrads
                         << " results (dq, dk, dv, then dbias with a bias and "
                            "dtable with a spatial table), got "
                         << 3 + getBiasGrads().size();
  if (static_cast<bool>(getOut()) != static_cast<bool>(getLse()))
    return emitOpError() << "takes out and lse together or neither";
  if (Value out = getOut()) {
    if (out.getType() != getDout().getType())
      return emitOpError() << "out type " << out.getType()
                           << " does not match the dout type "
                           << getDout().getType();
    if ((*this)->hasAttr(kContextParallelAttr))
      return emitOpError() << "takes no out and lse under context parallelism";
    RankedTensorType want =
        lseType(getQuery(), static_cast<int64_t>(getNumHeads()));
    if (getLse().getType() != want)
      return emitOpError() << "lse must be " << want << " ([B, H, Sq]), got "
                           << getLse().getType();
  }
  SmallVector<std::pair<StringRef, Value>> pairs = {
      {"dq", getQuery()}, {"dk", getKey()}, {"dv", getValue()}};
  if (getBias())
    pairs.push_back({"dbias", getBias()});
  if (getSpatialTable())
    pairs.push_back({"dtable", getSpatialTable()});
  for (auto [i, pair] : llvm::enumerate(pairs)) {
    Type actual = getOperation()->getResult(i).getType();
    if (actual != pair.second.getType())
      return emitOpError() << pair.first << " type " << actual
                           << " does not match the operand type "
                           << pair.second.getType();
  }
  return success();
}

int64_t AttentionGradOp::getFlops() {
  // The backward recomputes Q K^T and adds dO V^T, dS K, dS^T Q and P^T dO:
  // about 2.5 times the forward.
  int64_t fwd = attentionFlops(getQuery(), getKey(), getValue(),
                               static_cast<int64_t>(getNumHeads()));
  return fwd == kUnknownCost ? kUnknownCost : fwd * 5 / 2;
}

int64_t AttentionGradOp::getTransientBytes() {
  // One 64-row block of scores and of their gradient per head.
  RankedTensorType q = tensorOf(getQuery()), k = tensorOf(getKey());
  int64_t rows = std::min<int64_t>(64, q.getDimSize(1));
  if (ShapedType::isDynamic(q.getDimSize(1)))
    rows = 64;
  return mulCosts(
      {2, rows, k.getDimSize(1), static_cast<int64_t>(getNumHeads()), 4});
}

//===----------------------------------------------------------------------===//
// SparseAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult
SparseAttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
  auto v = cast<RankedTensorType>(adaptor.getValue().getType());
  if (q.getRank() != 2 || v.getRank() != 2)
    return failure();
  types.push_back(RankedTensorType::get({q.getDimSize(0), v.getDimSize(1)},
                                        q.getElementType()));
  return success();
}

LogicalResult SparseAttentionOp::verify() {
  RankedTensorType q = tensorOf(getQuery()), k = tensorOf(getKey()),
                   v = tensorOf(getValue()), rp = tensorOf(getRowPtr()),
                   ci = tensorOf(getColIdx());
  if (q.getRank() != 2 || k.getRank() != 2 || v.getRank() != 2)
    return emitOpError() << "expects query, key and value of rank 2 "
                            "([N, D]), got ranks "
                         << q.getRank() << ", " << k.getRank() << ", "
                         << v.getRank();
  SmallVector<std::pair<StringRef, Value>> typed = {
      {"query", getQuery()}, {"key", getKey()}, {"value", getValue()}};
  if (getEdgeBias())
    typed.push_back({"edge_bias", getEdgeBias()});
  if (failed(verifySameElementType(*this, typed)))
    return failure();
  if (!dimsAgree(q.getDimSize(1), k.getDimSize(1)))
    return emitOpError() << "query hidden size " << q.getDimSize(1)
                         << " differs from key hidden size " << k.getDimSize(1);
  if (!dimsAgree(k.getDimSize(0), v.getDimSize(0)))
    return emitOpError() << "key count " << k.getDimSize(0)
                         << " differs from value count " << v.getDimSize(0);
  auto heads = static_cast<int64_t>(getNumHeads());
  for (int64_t dim : {q.getDimSize(1), v.getDimSize(1)})
    if (!ShapedType::isDynamic(dim) && dim % heads != 0)
      return emitOpError() << "num_heads (" << heads
                           << ") must divide the hidden size (" << dim << ")";
  if (rp.getRank() != 1 || ci.getRank() != 1)
    return emitOpError() << "row_ptr and col_idx must have rank 1 (CSR)";
  int64_t n = q.getDimSize(0);
  if (!ShapedType::isDynamic(n) && !dimsAgree(rp.getDimSize(0), n + 1))
    return emitOpError() << "row_ptr must have N + 1 = " << n + 1
                         << " entries, got " << rp.getDimSize(0);
  if (Value eb = getEdgeBias()) {
    ArrayRef<int64_t> e = tensorOf(eb).getShape();
    if (e.size() != 2 || !dimsAgree(e[0], ci.getDimSize(0)) ||
        !dimsAgree(e[1], heads))
      return emitOpError() << "edge_bias must be [E, H] = "
                           << shapeStr({ci.getDimSize(0), heads}) << ", got "
                           << shapeStr(e);
  }
  return verifyResultType(
      *this, RankedTensorType::get({n, v.getDimSize(1)}, q.getElementType()));
}

int64_t SparseAttentionOp::getFlops() {
  int64_t edges = tensorOf(getColIdx()).getDimSize(0);
  int64_t d = tensorOf(getQuery()).getDimSize(1);
  int64_t dv = tensorOf(getValue()).getDimSize(1);
  int64_t perEdge = mulCosts({2, d});
  int64_t perEdgeV = mulCosts({2, dv});
  return mulCosts(
      {edges, addCosts(addCosts(perEdge, perEdgeV),
                       mulCosts({5, static_cast<int64_t>(getNumHeads())}))});
}

//===----------------------------------------------------------------------===//
// SpmmOp
//===----------------------------------------------------------------------===//

LogicalResult SpmmOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto rp = cast<RankedTensorType>(adaptor.getRowPtr().getType());
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  if (rp.getRank() != 1 || x.getRank() != 2)
    return failure();
  int64_t n = rp.getDimSize(0);
  n = ShapedType::isDynamic(n) ? n : n - 1;
  // Partition parallelism: this rank's block of the rows.
  if (DictionaryAttr attrs = adaptor.getAttributes())
    if (auto halo = attrs.getAs<HaloAttr>(kHaloAttr))
      n = halo.getNodes() / halo.getParts();
  types.push_back(
      RankedTensorType::get({n, x.getDimSize(1)}, x.getElementType()));
  return success();
}

LogicalResult SpmmOp::verify() {
  RankedTensorType rp = tensorOf(getRowPtr()), ci = tensorOf(getColIdx()),
                   vals = tensorOf(getValues()), x = tensorOf(getInput());
  if (rp.getRank() != 1 || ci.getRank() != 1 || vals.getRank() != 1)
    return emitOpError() << "row_ptr, col_idx and values must have rank 1 "
                            "(CSR)";
  if (!ShapedType::isDynamic(rp.getDimSize(0)) && rp.getDimSize(0) < 1)
    return emitOpError() << "row_ptr must have at least one entry";
  if (!dimsAgree(ci.getDimSize(0), vals.getDimSize(0)))
    return emitOpError() << "col_idx has " << ci.getDimSize(0)
                         << " entries but values has " << vals.getDimSize(0);
  if (x.getRank() != 2)
    return emitOpError() << "expects input of rank 2 ([M, D]), got rank "
                         << x.getRank();
  if (failed(verifySameElementType(
          *this, {{"input", getInput()}, {"values", getValues()}})))
    return failure();
  int64_t n = rp.getDimSize(0);
  n = ShapedType::isDynamic(n) ? n : n - 1;
  // Partition parallelism: this rank's block of the rows and of the input.
  if (auto halo = (*this)->getAttrOfType<HaloAttr>(kHaloAttr)) {
    const int64_t block = halo.getNodes() / halo.getParts();
    if (!ShapedType::isDynamic(n) && n != halo.getNodes())
      return emitOpError() << "has " << n << " CSR rows but #gt.halo splits "
                           << halo.getNodes() << " nodes";
    if (!dimsAgree(x.getDimSize(0), block))
      return emitOpError() << "input has " << x.getDimSize(0)
                           << " rows but #gt.halo gives each of its "
                           << halo.getParts() << " parts " << block;
    n = block;
  }
  return verifyResultType(
      *this, RankedTensorType::get({n, x.getDimSize(1)}, x.getElementType()));
}

int64_t SpmmOp::getFlops() {
  return mulCosts({2, tensorOf(getColIdx()).getDimSize(0),
                   tensorOf(getInput()).getDimSize(1)});
}

//===----------------------------------------------------------------------===//
// SpmmLinearOp
//===----------------------------------------------------------------------===//

LogicalResult SpmmLinearOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location>,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  auto rp = cast<RankedTensorType>(adaptor.getRowPtr().getType());
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto w = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (rp.getRank() != 1 || x.getRank() != 2 || w.getRank() != 2)
    return failure();
  int64_t n = rp.getDimSize(0);
  n = ShapedType::isDynamic(n) ? n : n - 1;
  int64_t d = x.getDimSize(1);
  // Partition parallelism: this rank's block of the rows. Mixture of
  // parallelism: the block's rows with all the columns after the switch.
  if (DictionaryAttr attrs = adaptor.getAttributes()) {
    if (auto halo = attrs.getAs<HaloAttr>(kHaloAttr))
      n = halo.getNodes() / halo.getParts();
    if (auto mop = attrs.getAs<HaloAttr>(kMopSwitchAttr)) {
      n = mop.getNodes() / mop.getParts();
      d = w.getDimSize(0);
    }
  }
  types.push_back(RankedTensorType::get({n, d}, x.getElementType()));
  types.push_back(
      RankedTensorType::get({n, w.getDimSize(1)}, x.getElementType()));
  return success();
}

/// The checks gt.spmm_linear and gt.linear_spmm share: the CSR, the input
/// [M, D] and weight [D, F], the chunk count against the `cut` rows the
/// chunks cut (named `cutName` in the message), an optional [cut, 1] scale
/// (`scaleShape` names it) and [F] bias, one element type; with #gt.halo,
/// the graph's N CSR rows and an input of this rank's N / P; with
/// gt.mop_switch, the graph's N CSR rows and, for gt.spmm_linear, an input
/// of D / P columns, an [N, 1] scale and N / P rows to cut, for
/// gt.linear_spmm an input of N / P rows, F a multiple of P and a scale
/// of the N / P transformed rows or of the N switched rows. Sets `n`
/// to the aggregated rows: N, or N / P with #gt.halo and gt.spmm_linear's
/// gt.mop_switch.
static LogicalResult verifyMoaOperands(Operation *op, Value rowPtr,
                                       Value colIdx, Value values, Value input,
                                       Value weight, Value scale, Value bias,
                                       int64_t chunks, bool chunksCutInput,
                                       int64_t &n) {
  RankedTensorType rp = tensorOf(rowPtr), ci = tensorOf(colIdx),
                   vals = tensorOf(values), x = tensorOf(input),
                   w = tensorOf(weight);
  if (rp.getRank() != 1 || ci.getRank() != 1 || vals.getRank() != 1)
    return op->emitOpError() << "row_ptr, col_idx and values must have rank 1 "
                                "(CSR)";
  if (!dimsAgree(ci.getDimSize(0), vals.getDimSize(0)))
    return op->emitOpError()
           << "col_idx has " << ci.getDimSize(0) << " entries but values has "
           << vals.getDimSize(0);
  if (x.getRank() != 2 || w.getRank() != 2)
    return op->emitOpError()
           << "expects input [M, D] and weight [D, F] of rank 2";
  auto mop = op->getAttrOfType<HaloAttr>(kMopSwitchAttr);
  if (mop && op->hasAttr(kHaloAttr))
    return op->emitOpError() << "gt.mop_switch and #gt.halo exclude each "
                                "other";
  // Under gt.mop_switch gt.spmm_linear aggregates D / P of the D columns
  // (gt.linear_spmm transforms the block's rows, all columns).
  const int64_t parts = mop && !chunksCutInput ? mop.getParts() : 1;
  const int64_t features = ShapedType::isDynamic(x.getDimSize(1))
                               ? x.getDimSize(1)
                               : x.getDimSize(1) * parts;
  if (!dimsAgree(features, w.getDimSize(0)))
    return op->emitOpError() << "input features " << features
                             << (parts > 1 ? " (over all parts)" : "")
                             << " differ from weight rows " << w.getDimSize(0);
  n = rp.getDimSize(0);
  if (!ShapedType::isDynamic(n) && n < 1)
    return op->emitOpError() << "row_ptr must have at least one entry";
  n = ShapedType::isDynamic(n) ? n : n - 1;
  // Partition parallelism (gt-partition-parallel's #gt.halo, as on
  // gt.spmm): the whole graph's CSR, this rank's block of the input rows
  // and of the aggregated rows.
  if (auto halo = op->getAttrOfType<HaloAttr>(kHaloAttr)) {
    const int64_t block = halo.getNodes() / halo.getParts();
    if (!ShapedType::isDynamic(n) && n != halo.getNodes())
      return op->emitOpError() << "has " << n << " CSR rows but #gt.halo "
                               << "splits " << halo.getNodes() << " nodes";
    if (!dimsAgree(x.getDimSize(0), block))
      return op->emitOpError() << "input has " << x.getDimSize(0)
                               << " rows but #gt.halo gives each of its "
                               << halo.getParts() << " parts " << block;
    n = block;
  }
  if (mop) {
    const int64_t block = mop.getNodes() / mop.getParts();
    if (!ShapedType::isDynamic(n) && n != mop.getNodes())
      return op->emitOpError()
             << "has " << n << " CSR rows but "
             << "gt.mop_switch splits " << mop.getNodes() << " nodes";
    // gt.linear_spmm: the block's rows transformed, then switched to all N
    // rows of F / P columns for the aggregation.
    if (chunksCutInput && !dimsAgree(x.getDimSize(0), block))
      return op->emitOpError() << "input has " << x.getDimSize(0)
                               << " rows but gt.mop_switch gives each of its "
                               << mop.getParts() << " parts " << block;
    if (chunksCutInput && !ShapedType::isDynamic(w.getDimSize(1)) &&
        w.getDimSize(1) % mop.getParts() != 0)
      return op->emitOpError()
             << "has " << w.getDimSize(1)
             << " transformed columns, not a multiple of "
             << "gt.mop_switch's " << mop.getParts() << " parts";
    if (!chunksCutInput)
      n = block;
  }
  // The chunks cut the aggregated rows (gt.spmm_linear; each rank's block
  // under gt.mop_switch) or the transformed rows, the aggregation's
  // columns (gt.linear_spmm). The scale multiplies the cut rows, but under
  // gt.mop_switch gt.spmm_linear's all N aggregated rows, before the
  // switch.
  const int64_t cut = chunksCutInput ? x.getDimSize(0) : n;
  int64_t scaleRows = mop && !chunksCutInput ? mop.getNodes() : cut;
  // gt.linear_spmm under gt.mop_switch may scale the switched rows instead,
  // all N of them, after the switch (GraphSAGE's backward 1 / deg).
  if (mop && chunksCutInput && scale && !tensorOf(scale).getShape().empty() &&
      tensorOf(scale).getShape().front() == mop.getNodes())
    scaleRows = mop.getNodes();
  const char *cutName = chunksCutInput ? " input rows" : " rows";
  const char *scaleName =
      chunksCutInput ? "scale must be [M, 1] = " : "scale must be [N, 1] = ";
  if (!ShapedType::isDynamic(cut) && chunks > std::max<int64_t>(cut, 1))
    return op->emitOpError()
           << "has " << chunks << " chunks but only " << cut << cutName;
  SmallVector<std::pair<StringRef, Value>> typed = {
      {"input", input}, {"values", values}, {"weight", weight}};
  if (scale) {
    ArrayRef<int64_t> ss = tensorOf(scale).getShape();
    if (ss.size() != 2 || !dimsAgree(ss[0], scaleRows) || ss[1] != 1)
      return op->emitOpError() << scaleName << shapeStr({scaleRows, 1})
                               << ", got " << shapeStr(ss);
    typed.push_back({"scale", scale});
  }
  if (bias) {
    ArrayRef<int64_t> bs = tensorOf(bias).getShape();
    if (bs.size() != 1 || !dimsAgree(bs[0], w.getDimSize(1)))
      return op->emitOpError()
             << "bias must be [F] = " << shapeStr({w.getDimSize(1)}) << ", got "
             << shapeStr(bs);
    typed.push_back({"bias", bias});
  }
  return verifySameElementType(op, typed);
}

LogicalResult SpmmLinearOp::verify() {
  int64_t n = 0;
  if (failed(verifyMoaOperands(*this, getRowPtr(), getColIdx(), getValues(),
                               getInput(), getWeight(), getScale(), getBias(),
                               getChunks(), /*chunksCutInput=*/false, n)))
    return failure();
  RankedTensorType x = tensorOf(getInput()), w = tensorOf(getWeight());
  // After gt.mop_switch's all-to-all the aggregated rows have all columns.
  const int64_t d =
      (*this)->hasAttr(kMopSwitchAttr) ? w.getDimSize(0) : x.getDimSize(1);
  auto agg = RankedTensorType::get({n, d}, x.getElementType());
  auto out = RankedTensorType::get({n, w.getDimSize(1)}, x.getElementType());
  if (getAggregate().getType() != agg || getResult().getType() != out)
    return emitOpError() << "result types must be " << agg << " and " << out;
  return success();
}

int64_t SpmmLinearOp::getFlops() {
  RankedTensorType x = tensorOf(getInput()), w = tensorOf(getWeight());
  const int64_t spmm =
      mulCosts({2, tensorOf(getColIdx()).getDimSize(0), x.getDimSize(1)});
  // The transform reads all D aggregated columns (D / P of them aggregated
  // here under gt.mop_switch).
  const int64_t gemm = mulCosts({2, tensorOf(getAggregate()).getDimSize(0),
                                 w.getDimSize(0), w.getDimSize(1)});
  return spmm == kUnknownCost || gemm == kUnknownCost ? kUnknownCost
                                                      : spmm + gemm;
}

//===----------------------------------------------------------------------===//
// LinearSpmmOp (GTMoaOps.td)
//===----------------------------------------------------------------------===//

LogicalResult LinearSpmmOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location>,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  auto rp = cast<RankedTensorType>(adaptor.getRowPtr().getType());
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto w = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (rp.getRank() != 1 || x.getRank() != 2 || w.getRank() != 2)
    return failure();
  int64_t n = rp.getDimSize(0);
  n = ShapedType::isDynamic(n) ? n : n - 1;
  int64_t f = w.getDimSize(1);
  // Partition parallelism: this rank's block of the rows. Mixture of
  // parallelism: all N rows of this rank's F / P columns after the switch.
  if (DictionaryAttr attrs = adaptor.getAttributes()) {
    if (auto halo = attrs.getAs<HaloAttr>(kHaloAttr))
      n = halo.getNodes() / halo.getParts();
    if (auto mop = attrs.getAs<HaloAttr>(kMopSwitchAttr);
        mop && !ShapedType::isDynamic(f))
      f /= mop.getParts();
  }
  types.push_back(RankedTensorType::get({x.getDimSize(0), w.getDimSize(1)},
                                        x.getElementType()));
  types.push_back(RankedTensorType::get({n, f}, x.getElementType()));
  return success();
}

LogicalResult LinearSpmmOp::verify() {
  int64_t n = 0;
  if (failed(verifyMoaOperands(*this, getRowPtr(), getColIdx(), getValues(),
                               getInput(), getWeight(), getScale(), getBias(),
                               getChunks(), /*chunksCutInput=*/true, n)))
    return failure();
  RankedTensorType x = tensorOf(getInput()), w = tensorOf(getWeight());
  const int64_t m = x.getDimSize(0);
  // After gt.mop_switch's all-to-all the aggregation has F / P columns.
  int64_t f = w.getDimSize(1);
  if (auto mop = (*this)->getAttrOfType<HaloAttr>(kMopSwitchAttr);
      mop && !ShapedType::isDynamic(f))
    f /= mop.getParts();
  auto t = RankedTensorType::get({m, w.getDimSize(1)}, x.getElementType());
  auto out = RankedTensorType::get({n, f}, x.getElementType());
  if (getTransformed().getType() != t || getResult().getType() != out)
    return emitOpError() << "result types must be " << t << " and " << out;
  return success();
}

int64_t LinearSpmmOp::getFlops() {
  RankedTensorType x = tensorOf(getInput()), w = tensorOf(getWeight());
  const int64_t gemm =
      mulCosts({2, x.getDimSize(0), x.getDimSize(1), w.getDimSize(1)});
  // The aggregation's columns (F / P of the F under gt.mop_switch).
  const int64_t spmm = mulCosts({2, tensorOf(getColIdx()).getDimSize(0),
                                 tensorOf(getResult()).getDimSize(1)});
  return spmm == kUnknownCost || gemm == kUnknownCost ? kUnknownCost
                                                      : spmm + gemm;
}

//===----------------------------------------------------------------------===//
// CsrTransposeOp
//===----------------------------------------------------------------------===//

LogicalResult CsrTransposeOp::inferReturnTypes(MLIRContext *ctx,
                                               std::optional<Location>,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  auto ci = cast<RankedTensorType>(adaptor.getColIdx().getType());
  if (ci.getRank() != 1)
    return failure();
  Type i64 = IntegerType::get(ctx, 64);
  types.push_back(RankedTensorType::get(
      {static_cast<int64_t>(adaptor.getNumCols()) + 1}, i64));
  types.append(2, RankedTensorType::get(ci.getShape(), i64));
  return success();
}

LogicalResult CsrTransposeOp::verify() {
  if (tensorOf(getColIdx()).getRank() != 1)
    return emitOpError() << "col_idx must have rank 1";
  if (Value rp = getRowPtr()) {
    RankedTensorType t = tensorOf(rp);
    if (t.getRank() != 1)
      return emitOpError() << "row_ptr must have rank 1";
    if (!ShapedType::isDynamic(t.getDimSize(0)) && t.getDimSize(0) < 1)
      return emitOpError() << "row_ptr must have at least one entry";
  }
  return success();
}

int64_t CsrTransposeOp::getFlops() {
  return mulCosts({2, tensorOf(getColIdx()).getDimSize(0)});
}

//===----------------------------------------------------------------------===//
// SpatialBiasOp
//===----------------------------------------------------------------------===//

LogicalResult SpatialBiasOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location>,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  auto d = cast<RankedTensorType>(adaptor.getDistance().getType());
  auto t = cast<RankedTensorType>(adaptor.getTable().getType());
  if (d.getRank() < 2 || t.getRank() != 2)
    return failure();
  types.push_back(biasType(d.getShape(), t.getDimSize(1), t.getElementType()));
  return success();
}

LogicalResult SpatialBiasOp::verify() {
  RankedTensorType d = tensorOf(getDistance()), t = tensorOf(getTable());
  if (d.getRank() != 2 && d.getRank() != 3)
    return emitOpError() << "expects distance of rank 2 ([Sq, Sk]) or 3 "
                            "([B, Sq, Sk]), got rank "
                         << d.getRank();
  if (t.getRank() != 2)
    return emitOpError() << "expects table of rank 2 ([M, H]), got rank "
                         << t.getRank();
  return verifyResultType(
      *this, biasType(d.getShape(), t.getDimSize(1), t.getElementType()));
}

int64_t SpatialBiasOp::getFlops() { return 0; }

//===----------------------------------------------------------------------===//
// EdgeBiasOp
//===----------------------------------------------------------------------===//

LogicalResult EdgeBiasOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto d = cast<RankedTensorType>(adaptor.getDistance().getType());
  auto t = cast<RankedTensorType>(adaptor.getTable().getType());
  if (d.getRank() < 2 || t.getRank() != 2)
    return failure();
  types.push_back(biasType(d.getShape(), t.getDimSize(1), t.getElementType()));
  return success();
}

LogicalResult EdgeBiasOp::verify() {
  RankedTensorType p = tensorOf(getPath()), d = tensorOf(getDistance()),
                   t = tensorOf(getTable()), w = tensorOf(getHopWeights());
  if (d.getRank() != 2 && d.getRank() != 3)
    return emitOpError() << "expects distance of rank 2 ([Sq, Sk]) or 3 "
                            "([B, Sq, Sk]), got rank "
                         << d.getRank();
  if (p.getRank() != d.getRank() + 1 ||
      !shapesAgree(p.getShape().drop_back(), d.getShape()))
    return emitOpError() << "path must be the distance shape plus a hop "
                            "dimension ("
                         << shapeStr(d.getShape()) << " + [L]), got "
                         << shapeStr(p.getShape());
  if (t.getRank() != 2)
    return emitOpError() << "expects table of rank 2 ([E, H]), got rank "
                         << t.getRank();
  int64_t hops = p.getDimSize(p.getRank() - 1), heads = t.getDimSize(1);
  if (w.getRank() != 3 || !dimsAgree(w.getDimSize(0), hops) ||
      !dimsAgree(w.getDimSize(1), heads) || !dimsAgree(w.getDimSize(2), heads))
    return emitOpError() << "hop_weights must be [L, H, H] = "
                         << shapeStr({hops, heads, heads}) << ", got "
                         << shapeStr(w.getShape());
  if (failed(verifySameElementType(
          *this, {{"table", getTable()}, {"hop_weights", getHopWeights()}})))
    return failure();
  return verifyResultType(*this,
                          biasType(d.getShape(), heads, t.getElementType()));
}

int64_t EdgeBiasOp::getFlops() {
  RankedTensorType p = tensorOf(getPath()), t = tensorOf(getTable());
  int64_t heads = t.getDimSize(1);
  return mulCosts({product(p.getShape()), 2, heads, heads});
}

//===----------------------------------------------------------------------===//
// DegreeEmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult
DegreeEmbeddingOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult DegreeEmbeddingOp::verify() {
  RankedTensorType x = tensorOf(getInput()), deg = tensorOf(getDegree()),
                   t = tensorOf(getTable());
  if (x.getRank() < 2)
    return emitOpError() << "expects input of rank >= 2 ([..., S, D]), got "
                            "rank "
                         << x.getRank();
  if (!shapesAgree(deg.getShape(), x.getShape().drop_back()))
    return emitOpError() << "degree must have the node shape "
                         << shapeStr(x.getShape().drop_back()) << ", got "
                         << shapeStr(deg.getShape());
  if (t.getRank() != 2 ||
      !dimsAgree(t.getDimSize(1), x.getDimSize(x.getRank() - 1)))
    return emitOpError() << "table must be [M, D] with D = "
                         << x.getDimSize(x.getRank() - 1) << ", got "
                         << shapeStr(t.getShape());
  if (failed(verifySameElementType(
          *this, {{"input", getInput()}, {"table", getTable()}})))
    return failure();
  return verifyResultType(*this, x);
}

int64_t DegreeEmbeddingOp::getFlops() {
  return getNumElements(getInput().getType());
}

//===----------------------------------------------------------------------===//
// NodeEmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult NodeEmbeddingOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location>,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  auto ids = cast<RankedTensorType>(adaptor.getIds().getType());
  auto t = cast<RankedTensorType>(adaptor.getTable().getType());
  if (t.getRank() != 2 || (adaptor.getSumFeatures() && ids.getRank() < 1))
    return failure();
  SmallVector<int64_t> shape(ids.getShape());
  if (adaptor.getSumFeatures())
    shape.pop_back();
  shape.push_back(t.getDimSize(1));
  types.push_back(RankedTensorType::get(shape, t.getElementType()));
  return success();
}

LogicalResult NodeEmbeddingOp::verify() {
  RankedTensorType ids = tensorOf(getIds()), t = tensorOf(getTable());
  if (t.getRank() != 2)
    return emitOpError() << "expects table of rank 2 ([V, D]), got rank "
                         << t.getRank();
  if (getSumFeatures() && ids.getRank() < 1)
    return emitOpError() << "sum_features needs ids with a feature dimension";
  SmallVector<int64_t> shape(ids.getShape());
  if (getSumFeatures())
    shape.pop_back();
  shape.push_back(t.getDimSize(1));
  return verifyResultType(*this,
                          RankedTensorType::get(shape, t.getElementType()));
}

int64_t NodeEmbeddingOp::getFlops() {
  // Summing F features costs one add per element and feature.
  return getSumFeatures() ? mulCosts({getNumElements(getIds().getType()),
                                      tensorOf(getTable()).getDimSize(1)})
                          : 0;
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult LayerNormOp::verify() {
  RankedTensorType x = tensorOf(getInput()), g = tensorOf(getScale());
  if (g.getRank() < 1 || g.getRank() > x.getRank())
    return emitOpError() << "scale rank " << g.getRank() << " must be in [1, "
                         << x.getRank()
                         << "] (the normalized trailing dimensions)";
  ArrayRef<int64_t> trailing = x.getShape().take_back(g.getRank());
  if (!shapesAgree(g.getShape(), trailing))
    return emitOpError() << "scale shape " << shapeStr(g.getShape())
                         << " must equal the trailing input shape "
                         << shapeStr(trailing);
  SmallVector<std::pair<StringRef, Value>> typed = {{"input", getInput()},
                                                    {"scale", getScale()}};
  if (Value b = getBias()) {
    if (!shapesAgree(tensorOf(b).getShape(), g.getShape()))
      return emitOpError() << "bias shape " << shapeStr(tensorOf(b).getShape())
                           << " must equal the scale shape "
                           << shapeStr(g.getShape());
    typed.push_back({"bias", b});
  }
  if (failed(verifySameElementType(*this, typed)))
    return failure();
  if (getEpsilon().convertToDouble() <= 0.0)
    return emitOpError() << "epsilon must be positive";
  return verifyResultType(*this, x);
}

int64_t LayerNormOp::getFlops() {
  return mulCosts({8, getNumElements(getInput().getType())});
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto w = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (x.getRank() < 1 || w.getRank() != 2)
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = w.getDimSize(1);
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult LinearOp::verify() {
  RankedTensorType x = tensorOf(getInput()), w = tensorOf(getWeight());
  if (x.getRank() < 1)
    return emitOpError() << "expects input of rank >= 1";
  if (w.getRank() != 2)
    return emitOpError() << "expects weight of rank 2 ([K, N]), got rank "
                         << w.getRank();
  if (!dimsAgree(x.getDimSize(x.getRank() - 1), w.getDimSize(0)))
    return emitOpError() << "input features " << x.getDimSize(x.getRank() - 1)
                         << " differ from weight rows " << w.getDimSize(0);
  SmallVector<std::pair<StringRef, Value>> typed = {{"input", getInput()},
                                                    {"weight", getWeight()}};
  if (Value b = getBias()) {
    ArrayRef<int64_t> bs = tensorOf(b).getShape();
    if (bs.size() != 1 || !dimsAgree(bs[0], w.getDimSize(1)))
      return emitOpError() << "bias must be [N] = "
                           << shapeStr({w.getDimSize(1)}) << ", got "
                           << shapeStr(bs);
    typed.push_back({"bias", b});
  }
  if (failed(verifySameElementType(*this, typed)))
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = w.getDimSize(1);
  return verifyResultType(*this,
                          RankedTensorType::get(shape, x.getElementType()));
}

int64_t LinearOp::getFlops() {
  RankedTensorType x = tensorOf(getInput()), w = tensorOf(getWeight());
  int64_t rows = product(x.getShape().drop_back());
  return mulCosts({2, rows, w.getDimSize(0), w.getDimSize(1)});
}

//===----------------------------------------------------------------------===//
// GeluOp
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

int64_t GeluOp::getFlops() {
  return mulCosts({8, getNumElements(getInput().getType())});
}

//===----------------------------------------------------------------------===//
// CrossEntropyOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location>,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  auto logits = cast<RankedTensorType>(adaptor.getLogits().getType());
  types.push_back(RankedTensorType::get({}, logits.getElementType()));
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  RankedTensorType logits = tensorOf(getLogits()),
                   labels = tensorOf(getLabels());
  if (logits.getRank() < 1)
    return emitOpError() << "expects logits of rank >= 1 ([..., C])";
  ArrayRef<int64_t> items = logits.getShape().drop_back();
  if (!shapesAgree(labels.getShape(), items))
    return emitOpError() << "labels must have shape " << shapeStr(items)
                         << " (logits without the class dimension), got "
                         << shapeStr(labels.getShape());
  if (Value mask = getMask())
    if (!shapesAgree(tensorOf(mask).getShape(), items))
      return emitOpError() << "mask must have shape " << shapeStr(items)
                           << ", got " << shapeStr(tensorOf(mask).getShape());
  return verifyResultType(*this,
                          RankedTensorType::get({}, logits.getElementType()));
}

int64_t CrossEntropyOp::getFlops() {
  return mulCosts({4, getNumElements(getLogits().getType())});
}

//===----------------------------------------------------------------------===//
// LayerOp
//===----------------------------------------------------------------------===//

LogicalResult LayerOp::verify() {
  Block &body = getBody().front();
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(&body.back());
  if (!yield)
    return emitOpError() << "body must end with gt.yield";
  if (yield.getOperandTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getNumOperands()
                         << " value(s) whose types do not match the "
                         << getNumResults() << " result type(s)";
  if (auto kind = getKind(); kind && kind->empty())
    return emitOpError() << "kind must not be empty when present";
  return success();
}

/// Sums a cost method over the ops nested in the layer that implement it.
template <typename Fn> static int64_t sumNested(LayerOp layer, Fn fn) {
  int64_t total = 0;
  layer.getBody().walk([&](CostOpInterface op) {
    if (op.getOperation() != layer.getOperation())
      total = addCosts(total, fn(op));
  });
  return total;
}

int64_t LayerOp::getFlops() {
  return sumNested(*this, [](CostOpInterface op) { return op.getFlops(); });
}

int64_t LayerOp::getBytesMoved() {
  return sumNested(*this,
                   [](CostOpInterface op) { return op.getBytesMoved(); });
}

int64_t LayerOp::getActivationBytes() {
  return sumNested(*this,
                   [](CostOpInterface op) { return op.getActivationBytes(); });
}

int64_t LayerOp::getTransientBytes() {
  int64_t peak = 0;
  getBody().walk([&](CostOpInterface op) {
    int64_t t = op.getTransientBytes();
    peak = (peak == kUnknownCost || t == kUnknownCost) ? kUnknownCost
                                                       : std::max(peak, t);
  });
  return peak;
}

#define GET_OP_CLASSES
#include "megagraph/Dialect/GT/GTOps.cpp.inc"

#define GET_OP_CLASSES
#include "megagraph/Dialect/GT/GTMoaOps.cpp.inc"
