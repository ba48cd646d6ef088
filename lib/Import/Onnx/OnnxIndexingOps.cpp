//===- OnnxIndexingOps.cpp - Gather / scatter ONNX ops ----------*- C++ -*-===//
//
// Part of MegaGraph. GatherElements, GatherND, ScatterElements, ScatterND,
// OneHot and Trilu. Every gather and scatter is linearized to rows of an
// [N, K, C] tensor (N batches of K rows of C elements) addressed by [N, W]
// row numbers:
// * a gather is one tosa.gather;
// * a scatter whose indices are known at import time gathers, for every
//   row, the updates written to it through the inverse index map (a row
//   written M times reads M update slots, unused slots an identity row),
//   folds them with the reduction and combines the result with the data;
// * a scatter whose indices are runtime values is one linalg.generic that
//   folds, for every output row, the updates whose index names it: O(K * W
//   * C) work and no temporary larger than the output (TOSA's scatter has
//   no reductions and no lowering in the CPU pipeline).
// Negative indices count from the end of their dimension, whether they are
// known at import time or not.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace megagraph::onnx_import {
namespace {

/// Largest inverse index map (in elements) built for a scatter with
/// constant indices; larger ones take the runtime-index path.
constexpr int64_t kMaxInverseMap = int64_t(1) << 24;

/// The element count of `dims`, saturated at INT64_MAX: dimensions computed
/// from a model's constants may be absurd, and the callers' size checks
/// must see a huge count, not a wrapped one.
int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    if (llvm::MulOverflow(p, d, p))
      return std::numeric_limits<int64_t>::max();
  return p;
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The multi-index of flat position `flat` in row-major `shape`.
SmallVector<int64_t> unflatten(int64_t flat, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return index;
}

/// Checks that input `i` holds int32 / int64 indices.
LogicalResult checkIndices(ImportContext &ic, int i) {
  RankedTensorType t = ic.inputType(i);
  if (!t)
    return failure();
  Type e = t.getElementType();
  if (!e.isInteger(32) && !e.isInteger(64))
    return ic.fail("indices must be int32 or int64");
  return success();
}

/// Linear positions are i32 (tosa.gather's index type).
LogicalResult checkAddressable(ImportContext &ic, ArrayRef<int64_t> shape) {
  if (product(shape) >= std::numeric_limits<int32_t>::max())
    return ic.fail("tensors of 2^31 or more elements cannot be indexed");
  return success();
}

/// `j` wrapped into [0, dim), or failure with a diagnostic.
FailureOr<int64_t> wrapIndex(ImportContext &ic, int64_t j, int64_t dim) {
  if (j < -dim || j >= dim)
    return ic.fail("index " + llvm::Twine(j) +
                   " is out of range for a dimension of size " +
                   llvm::Twine(dim));
  return j < 0 ? j + dim : j;
}

/// Runtime indices as i32, negative ones wrapped: idx < 0 ? idx + dims :
/// idx, with `dims` an i32 tensor broadcasting against `idx`. Indices still
/// out of range (an error in ONNX, which only data can reveal) are clamped
/// to [0, dims - 1], so that no access leaves the tensor.
Value wrapRuntime(ImportContext &ic, Value idx, Value dims) {
  Value i = ic.cast(idx, ic.b.getI32Type());
  Value neg = *ic.binary("less", i, ic.scalarLike(i, 0));
  Value wrapped = ic.select(neg, *ic.binary("add", i, dims), i);
  Value last = *ic.binary("sub", dims, ic.scalarLike(dims, 1));
  return *ic.binary("min", *ic.binary("max", wrapped, ic.scalarLike(i, 0)),
                    last);
}

/// An i32 constant of `shape` filled by `fn(multi-index)`.
Value indexConst(ImportContext &ic, ArrayRef<int64_t> shape,
                 llvm::function_ref<int64_t(ArrayRef<int64_t>)> fn) {
  ConstTensor c = ConstTensor::zeros(ic.b.getI32Type(), shape);
  for (int64_t f = 0, e = c.numElements(); f < e; ++f)
    c.set(f, static_cast<double>(fn(unflatten(f, shape))));
  return ic.materialize(c);
}

/// tosa.gather: values [N, K, C], rows [N, W] (i32 in [0, K)) -> [N, W, C].
Value gatherRows(ImportContext &ic, Value values, Value rows) {
  ArrayRef<int64_t> s = shapeOf(values);
  return tosa::GatherOp::create(
      ic.b, ic.loc(),
      ic.tensorType({s[0], shapeOf(rows)[1], s[2]}, elemOf(values)), values,
      rows);
}

//===----------------------------------------------------------------------===//
// Index linearization
//===----------------------------------------------------------------------===//

/// Row numbers addressed by the index tuples of input `idxInput` ([...,
/// r], over the dimensions `dims` of size r): sum_j idx[..., j] *
/// stride_j, shaped like the index tensor without its last dimension.
/// Constant indices give `known` (and a null value).
FailureOr<Value> tupleRows(ImportContext &ic, int idxInput,
                           ArrayRef<int64_t> dims,
                           std::optional<SmallVector<int64_t>> &known) {
  RankedTensorType t = ic.inputType(idxInput);
  ArrayRef<int64_t> shape = t.getShape();
  SmallVector<int64_t> outShape(shape.drop_back());
  int64_t r = dims.size(), count = product(outShape);
  SmallVector<int64_t> strides = stridesOf(dims);
  if (const ConstTensor *c = ic.inputConst(idxInput)) {
    known.emplace();
    for (int64_t w = 0; w < count; ++w) {
      int64_t row = 0;
      for (int64_t j = 0; j < r; ++j) {
        FailureOr<int64_t> v = wrapIndex(ic, c->getInt(w * r + j), dims[j]);
        if (failed(v))
          return failure();
        row += *v * strides[j];
      }
      known->push_back(row);
    }
    return Value();
  }
  Value idx = ic.input(idxInput);
  if (!idx)
    return failure();
  if (r == 0)
    return ic.splat(ic.b.getI32Type(), 0, outShape);
  SmallVector<int64_t> lastShape(shape.size(), 1);
  lastShape.back() = r;
  Value dimsC = indexConst(ic, lastShape,
                           [&](ArrayRef<int64_t> i) { return dims[i.back()]; });
  Value stridesC = indexConst(
      ic, lastShape, [&](ArrayRef<int64_t> i) { return strides[i.back()]; });
  Value scaled = *ic.binary("mul", wrapRuntime(ic, idx, dimsC), stridesC);
  if (r == 1)
    return ic.reshape(scaled, outShape);
  return ic.reduce("sum", scaled, {static_cast<int64_t>(shape.size()) - 1},
                   /*keepDims=*/false);
}

/// Flat positions in `dataShape` of the elements GatherElements /
/// ScatterElements address: the coordinates of each element of the index
/// tensor (input `idxInput`), with the one along `axis` replaced by the
/// index value. Constant indices give `known` (and a null value).
FailureOr<Value> elementPositions(ImportContext &ic, int idxInput,
                                  ArrayRef<int64_t> dataShape, int64_t axis,
                                  std::optional<SmallVector<int64_t>> &known) {
  RankedTensorType t = ic.inputType(idxInput);
  ArrayRef<int64_t> shape = t.getShape();
  SmallVector<int64_t> strides = stridesOf(dataShape);
  int64_t dim = dataShape[axis];
  auto base = [&](ArrayRef<int64_t> i) {
    int64_t p = 0;
    for (auto [d, x] : llvm::enumerate(i))
      if (static_cast<int64_t>(d) != axis)
        p += x * strides[d];
    return p;
  };
  if (const ConstTensor *c = ic.inputConst(idxInput)) {
    known.emplace();
    for (int64_t f = 0, e = c->numElements(); f < e; ++f) {
      FailureOr<int64_t> v = wrapIndex(ic, c->getInt(f), dim);
      if (failed(v))
        return failure();
      known->push_back(base(unflatten(f, shape)) + *v * strides[axis]);
    }
    return Value();
  }
  Value idx = ic.input(idxInput);
  if (!idx)
    return failure();
  Type i32 = ic.b.getI32Type();
  Value wrapped = wrapRuntime(ic, idx,
                              ic.splat(i32, static_cast<double>(dim),
                                       SmallVector<int64_t>(shape.size(), 1)));
  Value scaled = *ic.binary("mul", wrapped,
                            ic.splat(i32, static_cast<double>(strides[axis]),
                                     SmallVector<int64_t>(shape.size(), 1)));
  return *ic.binary("add", scaled, indexConst(ic, shape, base));
}

//===----------------------------------------------------------------------===//
// Scatter
//===----------------------------------------------------------------------===//

enum class Reduction { None, Add, Mul, Max, Min };

/// The node's `reduction` attribute (ScatterND / ScatterElements: none,
/// add and mul since opset 16, max and min since 18).
FailureOr<Reduction> getReduction(ImportContext &ic) {
  if (!ic.attr("reduction"))
    return Reduction::None;
  std::string r = ic.attrString("reduction", "none");
  if (ic.opset < 16)
    return ic.fail("the reduction attribute needs opset 16 or newer");
  if (r == "none")
    return Reduction::None;
  if (r == "add")
    return Reduction::Add;
  if (r == "mul")
    return Reduction::Mul;
  if (r == "max" || r == "min") {
    if (ic.opset < 18)
      return ic.fail("reduction '" + r + "' needs opset 18 or newer");
    return r == "max" ? Reduction::Max : Reduction::Min;
  }
  return ic.fail("unknown reduction '" + r +
                 "' (expected none, add, mul, max or min)");
}

/// The value that leaves any element unchanged under `r`.
double reductionIdentity(Reduction r, Type elem) {
  bool isFloat = isa<FloatType>(elem);
  unsigned width = elem.getIntOrFloatBitWidth();
  switch (r) {
  case Reduction::Mul:
    return 1.0;
  case Reduction::Max:
    return isFloat ? -INFINITY
                   : static_cast<double>(
                         APInt::getSignedMinValue(width).getSExtValue());
  case Reduction::Min:
    return isFloat ? INFINITY
                   : static_cast<double>(
                         APInt::getSignedMaxValue(width).getSExtValue());
  default:
    return 0.0;
  }
}

/// `acc (r) update` as scalar arith ops.
Value combineScalar(OpBuilder &b, Location l, Reduction r, Value acc,
                    Value update) {
  bool isFloat = isa<FloatType>(acc.getType());
  switch (r) {
  case Reduction::None:
    return update;
  case Reduction::Add:
    return isFloat ? Value(arith::AddFOp::create(b, l, acc, update))
                   : Value(arith::AddIOp::create(b, l, acc, update));
  case Reduction::Mul:
    return isFloat ? Value(arith::MulFOp::create(b, l, acc, update))
                   : Value(arith::MulIOp::create(b, l, acc, update));
  case Reduction::Max:
    return isFloat ? Value(arith::MaximumFOp::create(b, l, acc, update))
                   : Value(arith::MaxSIOp::create(b, l, acc, update));
  case Reduction::Min:
    return isFloat ? Value(arith::MinimumFOp::create(b, l, acc, update))
                   : Value(arith::MinSIOp::create(b, l, acc, update));
  }
  llvm_unreachable("unknown reduction");
}

/// Scatters rows with indices known at import time: data [N, K, C], rows
/// (N * W row numbers in [0, K)), updates [N, W, C].
Value scatterKnownRows(ImportContext &ic, Value data, ArrayRef<int64_t> rows,
                       Value updates, Reduction red) {
  ArrayRef<int64_t> s = shapeOf(data);
  int64_t n = s[0], k = s[1], c = s[2], w = shapeOf(updates)[1];
  Type elem = elemOf(data);
  // Which updates land on each row (for `none` only the last one, the
  // write that a sequential scatter leaves).
  std::vector<SmallVector<int64_t, 1>> writers(n * k);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t j = 0; j < w; ++j) {
      auto &list = writers[b * k + rows[b * w + j]];
      if (red == Reduction::None)
        list.clear();
      list.push_back(j);
    }
  int64_t m = 1;
  for (const auto &list : writers)
    m = std::max<int64_t>(m, list.size());
  ConstTensor inverse = ConstTensor::zeros(ic.b.getI32Type(), {n, k * m});
  ConstTensor hit = ConstTensor::zeros(ic.b.getI1Type(), {n, k, 1});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t row = 0; row < k; ++row) {
      const auto &list = writers[b * k + row];
      hit.set(b * k + row, !list.empty());
      for (int64_t slot = 0; slot < m; ++slot)
        inverse.set(b * k * m + row * m + slot,
                    static_cast<double>(slot < static_cast<int64_t>(list.size())
                                            ? list[slot]
                                            : w));
    }
  // Slot W of every batch is the identity row.
  Value identity = ic.splat(elem, reductionIdentity(red, elem), {n, 1, c});
  Value slots = ic.concat({updates, identity}, 1);
  Value gathered = gatherRows(ic, slots, ic.materialize(inverse));
  static constexpr StringLiteral kinds[] = {"", "sum", "prod", "max", "min"};
  Value folded = m == 1 ? gathered
                        : ic.reduce(kinds[static_cast<int>(red)],
                                    ic.reshape(gathered, {n, k, m, c}), {2},
                                    /*keepDims=*/false);
  switch (red) {
  case Reduction::None:
    return ic.select(ic.materialize(hit), folded, data);
  case Reduction::Add:
    return *ic.binary("add", data, folded);
  case Reduction::Mul:
    return *ic.binary("mul", data, folded);
  case Reduction::Max:
    return *ic.binary("max", data, folded);
  case Reduction::Min:
    return *ic.binary("min", data, folded);
  }
  llvm_unreachable("unknown reduction");
}

/// Scatters rows with runtime indices: data [N, K, C], rows [N, W] (i32 in
/// [0, K)), updates [N, W, C]. One linalg.generic over (n, k, c, w), w the
/// reduction: out[n, k, c] folds updates[n, w, c] for every w with
/// rows[n, w] == k into data[n, k, c], in order (so `none` keeps the last
/// write).
Value scatterRuntimeRows(ImportContext &ic, Value data, Value rows,
                         Value updates, Reduction red) {
  MLIRContext *ctx = ic.b.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d(0), d(3)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)};
  SmallVector<utils::IteratorType> iterators = {
      utils::IteratorType::parallel, utils::IteratorType::parallel,
      utils::IteratorType::parallel, utils::IteratorType::reduction};
  auto op = linalg::GenericOp::create(
      ic.b, ic.loc(), TypeRange{data.getType()}, ValueRange{rows, updates},
      ValueRange{data}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value row = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
        Value k = linalg::IndexOp::create(b, l, 1);
        Value isRow =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, row, k);
        Value next = combineScalar(b, l, red, args[2], args[1]);
        linalg::YieldOp::create(
            b, l, Value(arith::SelectOp::create(b, l, isRow, next, args[2])));
      });
  return op.getResult(0);
}

/// Scatters into rows, choosing the path by whether the row numbers are
/// known.
Value scatterRows(ImportContext &ic, Value data, Value rows,
                  const std::optional<SmallVector<int64_t>> &known,
                  Value updates, Reduction red) {
  ArrayRef<int64_t> s = shapeOf(data);
  if (known && s[0] * s[1] <= kMaxInverseMap)
    return scatterKnownRows(ic, data, *known, updates, red);
  if (known) {
    ConstTensor c =
        ConstTensor::zeros(ic.b.getI32Type(), {s[0], shapeOf(updates)[1]});
    for (auto [i, r] : llvm::enumerate(*known))
      c.set(i, static_cast<double>(r));
    rows = ic.materialize(c);
  }
  return scatterRuntimeRows(
      ic, data, ic.reshape(rows, {s[0], shapeOf(updates)[1]}), updates, red);
}

/// Checks the element type a scatter reduction can fold.
LogicalResult checkReducible(ImportContext &ic, Type elem, Reduction red) {
  if (red != Reduction::None && elem.isInteger(1))
    return ic.fail("a reduction over bool tensors is not supported");
  return success();
}

/// ScatterND(data, indices [..., r], updates): updates[i...] replaces (or is
/// folded into) the slice data[indices[i...]].
LogicalResult importScatterND(ImportContext &ic, const onnx::NodeProto &) {
  FailureOr<Reduction> red = getReduction(ic);
  if (failed(red) || failed(checkIndices(ic, 1)))
    return failure();
  Value data = ic.input(0), updates = ic.input(2);
  if (!data || !updates)
    return failure();
  ArrayRef<int64_t> ds = shapeOf(data);
  ArrayRef<int64_t> is = ic.inputType(1).getShape();
  if (failed(checkReducible(ic, elemOf(data), *red)) ||
      failed(checkAddressable(ic, ds)))
    return failure();
  if (is.empty())
    return ic.fail("indices must have rank >= 1");
  int64_t r = is.back();
  if (r > static_cast<int64_t>(ds.size()))
    return ic.fail("index tuples have " + llvm::Twine(r) +
                   " entries but data has rank " + llvm::Twine(ds.size()));
  SmallVector<int64_t> expected(is.drop_back());
  expected.append(ds.begin() + r, ds.end());
  if (shapeOf(updates) != ArrayRef<int64_t>(expected))
    return ic.fail("updates must have shape indices.shape[:-1] + "
                   "data.shape[r:]");
  if (elemOf(updates) != elemOf(data))
    return ic.fail("updates must have the data's element type");
  int64_t k = product(ds.take_front(r)), c = product(ds.drop_front(r)),
          w = product(is.drop_back());
  if (w == 0 || product(ds) == 0) {
    ic.setOutput(0, data);
    return success();
  }
  std::optional<SmallVector<int64_t>> known;
  FailureOr<Value> rows = tupleRows(ic, 1, ds.take_front(r), known);
  if (failed(rows))
    return failure();
  Value out = scatterRows(ic, ic.reshape(data, {1, k, c}), *rows, known,
                          ic.reshape(updates, {1, w, c}), *red);
  ic.setOutput(0, ic.reshape(out, ds));
  return success();
}

/// The [W, 1] column behind the runtime indices of a ScatterElements over
/// the rows of a [K, C] `data` that repeat one row number across each of
/// their C columns (torch's `scatter_add(0, index.expand(-1, C), src)`,
/// imported as a tosa.tile); null otherwise.
Value tiledRowIndex(ImportContext &ic, int64_t axis, ArrayRef<int64_t> ds,
                    ArrayRef<int64_t> is) {
  if (ds.size() != 2 || axis != 0 || is[1] != ds[1] || ic.inputConst(1))
    return Value();
  Value idx = ic.input(1);
  auto tile = idx ? idx.getDefiningOp<tosa::TileOp>() : nullptr;
  if (!tile || shapeOf(tile.getInput1()) != ArrayRef<int64_t>{is[0], 1})
    return Value();
  return tile.getInput1();
}

/// ScatterElements(data, indices, updates, axis): the element of updates at
/// position p goes to p with p[axis] replaced by indices[p].
LogicalResult importScatterElements(ImportContext &ic,
                                    const onnx::NodeProto &) {
  FailureOr<Reduction> red = getReduction(ic);
  if (failed(red) || failed(checkIndices(ic, 1)))
    return failure();
  Value data = ic.input(0), updates = ic.input(2);
  if (!data || !updates)
    return failure();
  ArrayRef<int64_t> ds = shapeOf(data);
  ArrayRef<int64_t> is = ic.inputType(1).getShape();
  int64_t rank = ds.size();
  if (failed(checkReducible(ic, elemOf(data), *red)) ||
      failed(checkAddressable(ic, ds)))
    return failure();
  if (rank == 0)
    return ic.fail("data must have rank >= 1");
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  if (static_cast<int64_t>(is.size()) != rank || shapeOf(updates) != is)
    return ic.fail("indices and updates must have one shape, of the data's "
                   "rank");
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > ds[d])
      return ic.fail("indices dimension " + llvm::Twine(d) + " (" +
                     llvm::Twine(is[d]) + ") exceeds the data's (" +
                     llvm::Twine(ds[d]) + ")");
  if (elemOf(updates) != elemOf(data))
    return ic.fail("updates must have the data's element type");
  int64_t w = product(is), n = product(ds);
  if (w == 0 || n == 0) {
    ic.setOutput(0, data);
    return success();
  }
  std::optional<SmallVector<int64_t>> known;
  if (Value column = tiledRowIndex(ic, *axis, ds, is)) {
    // Whole rows: W row scatters of C elements each, not W * C element
    // scatters into N * C positions.
    Value rows = wrapRuntime(
        ic, ic.reshape(column, {1, is[0]}),
        ic.splat(ic.b.getI32Type(), static_cast<double>(ds[0]), {1, 1}));
    Value out =
        scatterRows(ic, ic.reshape(data, {1, ds[0], ds[1]}), rows, known,
                    ic.reshape(updates, {1, is[0], is[1]}), *red);
    ic.setOutput(0, ic.reshape(out, ds));
    return success();
  }
  FailureOr<Value> pos = elementPositions(ic, 1, ds, *axis, known);
  if (failed(pos))
    return failure();
  Value out = scatterRows(ic, ic.reshape(data, {1, n, 1}),
                          *pos ? ic.reshape(*pos, {1, w}) : Value(), known,
                          ic.reshape(updates, {1, w, 1}), *red);
  ic.setOutput(0, ic.reshape(out, ds));
  return success();
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

/// Materializes known row numbers as an i32 tensor of `shape`.
Value rowsValue(ImportContext &ic, Value rows,
                const std::optional<SmallVector<int64_t>> &known,
                ArrayRef<int64_t> shape) {
  if (!known)
    return ic.reshape(rows, shape);
  ConstTensor c = ConstTensor::zeros(ic.b.getI32Type(), shape);
  for (auto [i, r] : llvm::enumerate(*known))
    c.set(i, static_cast<double>(r));
  return ic.materialize(c);
}

/// GatherElements(data, indices, axis): out[p] = data[p with p[axis] =
/// indices[p]], shaped like indices.
LogicalResult importGatherElements(ImportContext &ic, const onnx::NodeProto &) {
  if (failed(checkIndices(ic, 1)))
    return failure();
  Value data = ic.input(0);
  if (!data)
    return failure();
  ArrayRef<int64_t> ds = shapeOf(data);
  SmallVector<int64_t> is(ic.inputType(1).getShape());
  int64_t rank = ds.size();
  if (rank == 0)
    return ic.fail("data must have rank >= 1");
  if (failed(checkAddressable(ic, ds)))
    return failure();
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  if (static_cast<int64_t>(is.size()) != rank)
    return ic.fail("indices must have the data's rank");
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > ds[d])
      return ic.fail("indices dimension " + llvm::Twine(d) + " (" +
                     llvm::Twine(is[d]) + ") exceeds the data's (" +
                     llvm::Twine(ds[d]) + ")");
  int64_t w = product(is);
  if (w == 0 || product(ds) == 0) {
    if (w != 0)
      return ic.fail("cannot gather from an empty tensor");
    ic.setOutput(0, ic.emptyTensor(is, elemOf(data)));
    return success();
  }
  std::optional<SmallVector<int64_t>> known;
  FailureOr<Value> pos = elementPositions(ic, 1, ds, *axis, known);
  if (failed(pos))
    return failure();
  Value g = gatherRows(ic, ic.reshape(data, {1, product(ds), 1}),
                       rowsValue(ic, *pos, known, {1, w}));
  ic.setOutput(0, ic.reshape(g, is));
  return success();
}

/// GatherND(data, indices [..., r], batch_dims b): out[i...] =
/// data[batch..., indices[batch..., i..., :]], shaped indices.shape[:-1] +
/// data.shape[b + r:].
LogicalResult importGatherND(ImportContext &ic, const onnx::NodeProto &) {
  if (failed(checkIndices(ic, 1)))
    return failure();
  Value data = ic.input(0);
  if (!data)
    return failure();
  ArrayRef<int64_t> ds = shapeOf(data);
  ArrayRef<int64_t> is = ic.inputType(1).getShape();
  int64_t b = ic.attrInt("batch_dims", 0);
  if (is.empty())
    return ic.fail("indices must have rank >= 1");
  if (b < 0 || b >= static_cast<int64_t>(is.size()) ||
      b >= static_cast<int64_t>(ds.size()))
    return ic.fail("batch_dims " + llvm::Twine(b) +
                   " must be smaller than the ranks of data and indices");
  if (ds.take_front(b) != is.take_front(b))
    return ic.fail("the first batch_dims dimensions of data and indices "
                   "differ");
  int64_t r = is.back();
  if (b + r > static_cast<int64_t>(ds.size()))
    return ic.fail("index tuples have " + llvm::Twine(r) +
                   " entries but "
                   "data has only " +
                   llvm::Twine(ds.size() - b) + " dimensions after the batch");
  if (failed(checkAddressable(ic, ds)))
    return failure();
  SmallVector<int64_t> outShape(is.drop_back());
  outShape.append(ds.begin() + b + r, ds.end());
  int64_t n = product(ds.take_front(b)), k = product(ds.slice(b, r)),
          c = product(ds.drop_front(b + r)),
          w = product(is.slice(b, is.size() - 1 - b));
  if (product(outShape) == 0) {
    ic.setOutput(0, ic.emptyTensor(outShape, elemOf(data)));
    return success();
  }
  if (product(ds) == 0)
    return ic.fail("cannot gather from an empty tensor");
  std::optional<SmallVector<int64_t>> known;
  FailureOr<Value> rows = tupleRows(ic, 1, ds.slice(b, r), known);
  if (failed(rows))
    return failure();
  Value g = gatherRows(ic, ic.reshape(data, {n, k, c}),
                       rowsValue(ic, *rows, known, {n, w}));
  ic.setOutput(0, ic.reshape(g, outShape));
  return success();
}

//===----------------------------------------------------------------------===//
// OneHot, Trilu
//===----------------------------------------------------------------------===//

/// OneHot(indices, depth, values = [off, on], axis): a new dimension of
/// size depth at `axis` holding `on` where its position equals the index
/// (negative indices count from depth; others out of range are all off).
LogicalResult importOneHot(ImportContext &ic, const onnx::NodeProto &) {
  Value indices = ic.input(0), values = ic.input(2);
  if (!indices || !values)
    return failure();
  FailureOr<SmallVector<int64_t>> depthIn = ic.inputInts(1, "depth");
  if (failed(depthIn))
    return failure();
  if (depthIn->size() != 1 || (*depthIn)[0] < 1)
    return ic.fail("depth must be one positive value");
  int64_t depth = (*depthIn)[0];
  if (product(shapeOf(values)) != 2)
    return ic.fail("values must hold two elements [off_value, on_value]");
  SmallVector<int64_t> is(shapeOf(indices));
  int64_t outRank = is.size() + 1;
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", -1), outRank);
  if (failed(axis))
    return failure();
  // Float indices are cast to int64 (truncating) first.
  Type i64 = ic.b.getI64Type();
  Value idx = ic.cast(indices, i64);
  Value neg = *ic.binary("less", idx, ic.scalarLike(idx, 0));
  idx = ic.select(neg, *ic.binary("add", idx, ic.scalarLike(idx, depth)), idx);
  SmallVector<int64_t> expanded(is);
  expanded.insert(expanded.begin() + *axis, 1);
  SmallVector<int64_t> iotaShape(outRank, 1);
  iotaShape[*axis] = depth;
  ConstTensor iota = ConstTensor::zeros(i64, iotaShape);
  for (int64_t i = 0; i < depth; ++i)
    iota.set(i, static_cast<double>(i));
  Value hit =
      *ic.binary("equal", ic.reshape(idx, expanded), ic.materialize(iota));
  SmallVector<int64_t> ones(outRank, 1);
  Value flat = ic.reshape(values, {2});
  Value off = ic.reshape(ic.slice(flat, {0}, {1}), ones);
  Value on = ic.reshape(ic.slice(flat, {1}, {1}), ones);
  ic.setOutput(0, ic.select(hit, on, off));
  return success();
}

/// Trilu(x, k, upper): keeps the elements of the last two dimensions on and
/// above (upper) or on and below the k-th diagonal, zeroing the rest.
LogicalResult importTrilu(ImportContext &ic, const onnx::NodeProto &) {
  Value x = ic.input(0);
  if (!x)
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank < 2)
    return ic.fail("expects a tensor of rank >= 2");
  int64_t k = 0;
  if (ic.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> kIn = ic.inputInts(1, "diagonal offset k");
    if (failed(kIn))
      return failure();
    if (kIn->size() != 1)
      return ic.fail("k must hold one value");
    k = (*kIn)[0];
  }
  bool upper = ic.attrInt("upper", 1) != 0;
  int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  if (product(shape) == 0) {
    ic.setOutput(0, x);
    return success();
  }
  ConstTensor keep = ConstTensor::zeros(ic.b.getI1Type(), {rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep.set(i * cols + j, upper ? j - i >= k : j - i <= k);
  ic.setOutput(0, ic.select(ic.materialize(keep), x, ic.scalarLike(x, 0)));
  return success();
}

} // namespace

void registerIndexingOps(llvm::StringMap<OpHandler> &h) {
  h["GatherElements"] = importGatherElements;
  h["GatherND"] = importGatherND;
  h["ScatterElements"] = importScatterElements;
  h["ScatterND"] = importScatterND;
  h["OneHot"] = importOneHot;
  h["Trilu"] = importTrilu;
}

} // namespace megagraph::onnx_import
