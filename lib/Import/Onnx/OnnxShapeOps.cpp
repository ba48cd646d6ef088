//===- OnnxShapeOps.cpp - Shape and data-movement ONNX ops ------*- C++ -*-===//
//
// Part of MegaGraph. Constant, Shape, Size, Reshape, Transpose, (Un)Squeeze,
// Flatten, Concat, Split, Slice, Gather, Pad, ConstantOfShape, Expand,
// Range, Tile. PyTorch exports compute reshape targets with Shape -> Gather ->
// Concat chains; on static shapes those are evaluated here, so every TOSA op
// the importer emits has a static type.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace megagraph::onnx_import {
namespace {

constexpr int64_t kMaxFoldElements = 1 << 16;
/// Largest Tile result accepted, as for graph inputs and initializers.
constexpr int64_t kMaxTiledElements = int64_t(1) << 48;

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

/// Builds a constant of `shape` whose element at each multi-index comes from
/// `in` at the flat index `src(index)`.
ConstTensor remap(const ConstTensor &in, ArrayRef<int64_t> shape,
                  llvm::function_ref<int64_t(ArrayRef<int64_t>)> src) {
  ConstTensor out = ConstTensor::zeros(in.elementType, shape);
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0, e = out.numElements(); flat < e; ++flat) {
    int64_t rem = flat;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      index[d] = rem % shape[d];
      rem /= shape[d];
    }
    out.set(flat, in.getDouble(src(index)));
  }
  return out;
}

/// Flat offset of `index` in row-major `shape`.
int64_t flatten(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t off = 0;
  for (auto [i, d] : llvm::zip(index, shape))
    off = off * d + i;
  return off;
}

/// Sets output 0 to `c` reshaped, or to the reshaped input value.
LogicalResult setReshaped(ImportContext &ic, ArrayRef<int64_t> shape) {
  if (const ConstTensor *c = ic.inputConst(0)) {
    ConstTensor out = *c;
    out.shape.assign(shape.begin(), shape.end());
    ic.setOutputConst(0, std::move(out));
    return success();
  }
  Value v = ic.input(0);
  if (!v)
    return failure();
  ic.setOutput(0, ic.reshape(v, shape));
  return success();
}

LogicalResult importConstant(ImportContext &ic, const onnx::NodeProto &node) {
  MLIRContext *ctx = ic.b.getContext();
  ConstTensor c;
  if (const onnx::AttributeProto *a = ic.attr("value")) {
    std::string err;
    FailureOr<ConstTensor> t = readTensorProto(ctx, a->t(), err, ic.external);
    if (failed(t))
      return ic.fail(err);
    c = std::move(*t);
  } else if (const onnx::AttributeProto *a = ic.attr("value_float")) {
    c = ConstTensor::zeros(Float32Type::get(ctx), {});
    c.set(0, a->f());
  } else if (const onnx::AttributeProto *a = ic.attr("value_int")) {
    c = ConstTensor::zeros(IntegerType::get(ctx, 64), {});
    c.set(0, static_cast<double>(a->i()));
  } else if (const onnx::AttributeProto *a = ic.attr("value_floats")) {
    c = ConstTensor::zeros(Float32Type::get(ctx), {a->floats_size()});
    for (int i = 0; i < a->floats_size(); ++i)
      c.set(i, a->floats(i));
  } else if (const onnx::AttributeProto *a = ic.attr("value_ints")) {
    c = ConstTensor::zeros(IntegerType::get(ctx, 64), {a->ints_size()});
    for (int i = 0; i < a->ints_size(); ++i)
      c.set(i, static_cast<double>(a->ints(i)));
  } else {
    return ic.fail("has no supported value attribute (value, value_float, "
                   "value_int, value_floats, value_ints)");
  }
  (void)node;
  ic.setOutputConst(0, std::move(c));
  return success();
}

LogicalResult importShape(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  int64_t rank = t.getRank();
  int64_t start = ic.attrInt("start", 0), end = ic.attrInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  ConstTensor c = ConstTensor::zeros(ic.b.getI64Type(),
                                     {std::max<int64_t>(0, end - start)});
  for (int64_t i = start; i < end; ++i)
    c.set(i - start, static_cast<double>(t.getDimSize(i)));
  ic.setOutputConst(0, std::move(c));
  return success();
}

LogicalResult importSize(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  ConstTensor c = ConstTensor::zeros(ic.b.getI64Type(), {});
  c.set(0, static_cast<double>(t.getNumElements()));
  ic.setOutputConst(0, std::move(c));
  return success();
}

LogicalResult importReshape(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  FailureOr<SmallVector<int64_t>> target = ic.inputInts(1, "target shape");
  if (failed(target))
    return failure();
  bool allowZero = ic.attrInt("allowzero", 0) != 0;
  SmallVector<int64_t> shape(*target);
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 0 && !allowZero) {
      if (i >= static_cast<size_t>(t.getRank()))
        return ic.fail("target dimension " + llvm::Twine(i) +
                       " copies an input dimension that does not exist");
      d = t.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return ic.fail("target shape has more than one -1");
      inferred = i;
      continue;
    }
    if (d < 0)
      return ic.fail("target dimension " + llvm::Twine(i) + " is " +
                     llvm::Twine(d) +
                     "; the only negative size is -1 (inferred)");
    if (llvm::MulOverflow(known, d, known))
      return ic.fail("target shape has more elements than an int64 holds");
  }
  if (inferred >= 0) {
    if (known == 0 || t.getNumElements() % known != 0)
      return ic.fail(
          "cannot infer the -1 dimension: " + llvm::Twine(t.getNumElements()) +
          " elements do not divide into " + llvm::Twine(known));
    shape[inferred] = t.getNumElements() / known;
  }
  if (product(shape) != t.getNumElements())
    return ic.fail("target shape has " + llvm::Twine(product(shape)) +
                   " elements but the input has " +
                   llvm::Twine(t.getNumElements()));
  return setReshaped(ic, shape);
}

LogicalResult importFlatten(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  int64_t axis = ic.attrInt("axis", 1);
  if (axis < 0)
    axis += t.getRank();
  if (axis < 0 || axis > t.getRank())
    return ic.fail("axis out of range");
  int64_t outer = product(t.getShape().take_front(axis));
  return setReshaped(ic,
                     {outer, t.getNumElements() / std::max<int64_t>(outer, 1)});
}

/// Axes of (Un)Squeeze: an input since opset 13, an attribute before.
FailureOr<SmallVector<int64_t>> getAxes(ImportContext &ic, int inputIndex) {
  if (ic.hasInput(inputIndex))
    return ic.inputInts(inputIndex, "axes");
  if (auto axes = ic.attrInts("axes"))
    return *axes;
  return SmallVector<int64_t>();
}

LogicalResult importSqueeze(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  FailureOr<SmallVector<int64_t>> axes = getAxes(ic, 1);
  if (failed(axes))
    return failure();
  int64_t rank = t.getRank();
  SmallVector<bool> drop(rank, false);
  if (axes->empty()) {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = t.getDimSize(i) == 1;
  }
  for (int64_t a : *axes) {
    FailureOr<int64_t> axis = ic.normAxis(a, rank);
    if (failed(axis))
      return failure();
    if (t.getDimSize(*axis) != 1)
      return ic.fail("cannot squeeze dimension " + llvm::Twine(*axis) +
                     " of size " + llvm::Twine(t.getDimSize(*axis)));
    drop[*axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      shape.push_back(t.getDimSize(i));
  return setReshaped(ic, shape);
}

LogicalResult importUnsqueeze(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  FailureOr<SmallVector<int64_t>> axes = getAxes(ic, 1);
  if (failed(axes))
    return failure();
  int64_t outRank = t.getRank() + axes->size();
  SmallVector<bool> isNew(outRank, false);
  for (int64_t a : *axes) {
    FailureOr<int64_t> axis = ic.normAxis(a, outRank);
    if (failed(axis))
      return failure();
    if (isNew[*axis])
      return ic.fail("axis " + llvm::Twine(a) + " is repeated");
    isNew[*axis] = true;
  }
  SmallVector<int64_t> shape;
  int64_t src = 0;
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(isNew[i] ? 1 : t.getDimSize(src++));
  return setReshaped(ic, shape);
}

LogicalResult importTranspose(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  int64_t rank = t.getRank();
  SmallVector<int64_t> perm;
  if (auto p = ic.attrInts("perm"))
    perm = *p;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    return ic.fail("perm has " + llvm::Twine(perm.size()) +
                   " entries for rank " + llvm::Twine(rank));
  SmallVector<int64_t> shape;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return ic.fail("perm is not a permutation of 0.." +
                     llvm::Twine(rank - 1));
    seen[p] = true;
    shape.push_back(t.getDimSize(p));
  }
  if (const ConstTensor *c = ic.inputConst(0)) {
    if (c->numElements() <= kMaxFoldElements) {
      ic.setOutputConst(0, remap(*c, shape, [&](ArrayRef<int64_t> idx) {
                          SmallVector<int64_t> srcIdx(rank);
                          for (int64_t i = 0; i < rank; ++i)
                            srcIdx[perm[i]] = idx[i];
                          return flatten(srcIdx, c->shape);
                        }));
      return success();
    }
  }
  Value v = ic.input(0);
  if (!v)
    return failure();
  ic.setOutput(0, ic.transpose(v, perm));
  return success();
}

LogicalResult importConcat(ImportContext &ic, const onnx::NodeProto &node) {
  RankedTensorType first = ic.inputType(0);
  if (!first)
    return failure();
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", 0), first.getRank());
  if (failed(axis))
    return failure();
  bool allConst = true;
  SmallVector<RankedTensorType> types;
  for (int i = 0; i < node.input_size(); ++i) {
    RankedTensorType t = ic.inputType(i);
    if (!t)
      return failure();
    if (t.getRank() != first.getRank())
      return ic.fail("inputs have different ranks");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != *axis && t.getDimSize(d) != first.getDimSize(d))
        return ic.fail("input #" + llvm::Twine(i) + " differs in dimension " +
                       llvm::Twine(d));
    types.push_back(t);
    allConst &= ic.inputConst(i) != nullptr;
  }
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (RankedTensorType t : types)
    shape[*axis] += t.getDimSize(*axis);
  if (allConst && product(shape) <= kMaxFoldElements) {
    ConstTensor out = ConstTensor::zeros(ic.inputConst(0)->elementType, shape);
    SmallVector<int64_t> index(shape.size());
    for (int64_t flat = 0, e = out.numElements(); flat < e; ++flat) {
      int64_t rem = flat;
      for (int64_t d = shape.size() - 1; d >= 0; --d) {
        index[d] = rem % shape[d];
        rem /= shape[d];
      }
      int64_t k = 0, pos = index[*axis];
      while (pos >= types[k].getDimSize(*axis))
        pos -= types[k++].getDimSize(*axis);
      SmallVector<int64_t> src(index);
      src[*axis] = pos;
      out.set(flat,
              ic.inputConst(k)->getDouble(flatten(src, types[k].getShape())));
    }
    ic.setOutputConst(0, std::move(out));
    return success();
  }
  if (product(shape) == 0) {
    ic.setOutput(0, ic.emptyTensor(shape, first.getElementType()));
    return success();
  }
  SmallVector<Value> values;
  for (int i = 0; i < node.input_size(); ++i) {
    if (types[i].getDimSize(*axis) == 0)
      continue;
    Value v = ic.input(i);
    if (!v)
      return failure();
    values.push_back(v);
  }
  ic.setOutput(0, ic.concat(values, *axis));
  return success();
}

/// Per-axis [start, end) with step 1 after ONNX clamping rules.
struct SliceRange {
  int64_t start, end, step;
};

LogicalResult importSlice(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  int64_t rank = t.getRank();
  FailureOr<SmallVector<int64_t>> starts = ic.inputInts(1, "starts");
  if (failed(starts))
    return failure();
  FailureOr<SmallVector<int64_t>> ends = ic.inputInts(2, "ends");
  if (failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (ic.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> a = ic.inputInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (ic.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> s = ic.inputInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (axes.size() != starts->size() || ends->size() != starts->size() ||
      steps.size() != starts->size())
    return ic.fail("starts, ends, axes and steps differ in length");
  SmallVector<SliceRange> ranges;
  for (int64_t d = 0; d < rank; ++d)
    ranges.push_back({0, t.getDimSize(d), 1});
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> axis = ic.normAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    int64_t dim = t.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return ic.fail("slice step must not be 0");
    int64_t s = (*starts)[i], e = (*ends)[i];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    ranges[*axis] = {s, e, step};
  }
  SmallVector<int64_t> shape, start;
  bool unitSteps = true;
  for (const SliceRange &r : ranges) {
    // ceil(|end - start| / |step|) elements, computed so that a step near
    // INT64_MAX or INT64_MIN (one element) does not overflow.
    int64_t n = 0;
    if (r.step > 0 && r.end > r.start)
      n = (r.end - r.start - 1) / r.step + 1;
    else if (r.step < 0 && r.start > r.end)
      n = static_cast<int64_t>(static_cast<uint64_t>(r.start - r.end - 1) /
                               (0 - static_cast<uint64_t>(r.step))) +
          1;
    shape.push_back(n);
    start.push_back(r.start);
    unitSteps &= r.step == 1;
  }
  if (const ConstTensor *c = ic.inputConst(0)) {
    ic.setOutputConst(0, remap(*c, shape, [&](ArrayRef<int64_t> idx) {
                        SmallVector<int64_t> src;
                        for (auto [i, r] : llvm::enumerate(ranges))
                          src.push_back(r.start + idx[i] * r.step);
                        return flatten(src, c->shape);
                      }));
    return success();
  }
  Value v = ic.input(0);
  if (!v)
    return failure();
  if (unitSteps || llvm::is_contained(shape, 0)) {
    ic.setOutput(0, ic.slice(v, start, shape));
    return success();
  }
  // Other steps: slice the bounding box of the selected elements, then
  // reverse (step -1) or gather every |step|-th element along each strided
  // axis.
  SmallVector<int64_t> boxStart, boxSize;
  for (auto [d, r] : llvm::enumerate(ranges)) {
    int64_t span = (shape[d] - 1) * r.step;
    boxStart.push_back(r.step > 0 ? r.start : r.start + span);
    boxSize.push_back(std::abs(span) + 1);
  }
  v = ic.slice(v, boxStart, boxSize);
  for (auto [d, r] : llvm::enumerate(ranges)) {
    if (r.step == 1 || shape[d] == 1)
      continue;
    if (r.step == -1) {
      v = ic.reverse(v, d);
      continue;
    }
    SmallVector<int64_t> indices;
    for (int64_t i = 0; i < shape[d]; ++i)
      indices.push_back(r.step > 0 ? i * r.step : boxSize[d] - 1 + i * r.step);
    v = ic.gather(v, d, indices);
  }
  ic.setOutput(0, v);
  return success();
}

LogicalResult importSplit(ImportContext &ic, const onnx::NodeProto &node) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", 0), t.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = t.getDimSize(*axis), parts = node.output_size();
  // Sizes come from input #1 (since opset 13); without it the dimension is
  // split into ceil(dim / parts) chunks, the last one smaller, where opset
  // 18 names the number of parts in num_outputs.
  SmallVector<int64_t> sizes;
  if (ic.attr("split"))
    return ic.fail("the 'split' attribute is not part of Split since opset "
                   "13 (sizes are input #1)");
  const onnx::AttributeProto *numOutputs = ic.attr("num_outputs");
  if (numOutputs && ic.opset < 18)
    return ic.fail("the num_outputs attribute needs opset 18 or newer");
  if (ic.hasInput(1)) {
    if (numOutputs)
      return ic.fail("give either the split sizes (input #1) or "
                     "num_outputs, not both");
    FailureOr<SmallVector<int64_t>> s = ic.inputInts(1, "split sizes");
    if (failed(s))
      return failure();
    sizes = *s;
  } else {
    if (numOutputs && numOutputs->i() != parts)
      return ic.fail("num_outputs is " + llvm::Twine(numOutputs->i()) +
                     " but the node has " + llvm::Twine(parts) + " outputs");
    int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  }
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }))
    return ic.fail("split sizes must not be negative");
  if (static_cast<int64_t>(sizes.size()) != parts)
    return ic.fail("split has " + llvm::Twine(sizes.size()) + " sizes for " +
                   llvm::Twine(parts) + " outputs");
  int64_t offset = 0;
  Value v = ic.input(0);
  if (!v)
    return failure();
  for (int64_t i = 0; i < parts; ++i) {
    SmallVector<int64_t> start(t.getRank(), 0), size(t.getShape());
    start[*axis] = offset;
    size[*axis] = sizes[i];
    offset += sizes[i];
    ic.setOutput(i, ic.slice(v, start, size));
  }
  if (offset != dim)
    return ic.fail("split sizes add up to " + llvm::Twine(offset) +
                   " but the dimension is " + llvm::Twine(dim));
  return success();
}

LogicalResult importGather(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType dataType = ic.inputType(0), idxType = ic.inputType(1);
  if (!dataType || !idxType)
    return failure();
  int64_t rank = dataType.getRank();
  FailureOr<int64_t> axisOr = ic.normAxis(ic.attrInt("axis", 0), rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr, k = dataType.getDimSize(axis);
  ArrayRef<int64_t> idxShape = idxType.getShape();
  SmallVector<int64_t> outShape(dataType.getShape().take_front(axis));
  outShape.append(idxShape.begin(), idxShape.end());
  outShape.append(dataType.getShape().begin() + axis + 1,
                  dataType.getShape().end());

  const ConstTensor *data = ic.inputConst(0), *idx = ic.inputConst(1);
  if (idx)
    for (int64_t i = 0, e = idx->numElements(); i < e; ++i) {
      int64_t j = idx->getInt(i);
      if (j < -k || j >= k)
        return ic.fail("index " + llvm::Twine(j) +
                       " is out of range for a "
                       "dimension of size " +
                       llvm::Twine(k));
    }
  if (data && idx && product(outShape) <= kMaxFoldElements) {
    int64_t idxRank = idxShape.size();
    ic.setOutputConst(0, remap(*data, outShape, [&](ArrayRef<int64_t> o) {
                        SmallVector<int64_t> src(o.take_front(axis));
                        int64_t j = idx->getInt(
                            flatten(o.slice(axis, idxRank), idxShape));
                        src.push_back(j < 0 ? j + k : j);
                        src.append(o.begin() + axis + idxRank, o.end());
                        return flatten(src, data->shape);
                      }));
    return success();
  }
  Value v = ic.input(0);
  if (!v)
    return failure();
  // A scalar constant index is a slice.
  if (idx && idx->numElements() == 1 && idxShape.empty()) {
    int64_t j = idx->getInt(0);
    SmallVector<int64_t> start(rank, 0), size(dataType.getShape());
    start[axis] = j < 0 ? j + k : j;
    size[axis] = 1;
    ic.setOutput(0, ic.reshape(ic.slice(v, start, size), outShape));
    return success();
  }
  Value indices;
  if (idx) {
    ConstTensor fixed = ConstTensor::zeros(ic.b.getI32Type(), idxShape);
    for (int64_t i = 0, e = fixed.numElements(); i < e; ++i) {
      int64_t j = idx->getInt(i);
      fixed.set(i, static_cast<double>(j < 0 ? j + k : j));
    }
    indices = ic.materialize(fixed);
  } else {
    Value raw = ic.input(1);
    if (!raw)
      return failure();
    if (!isa<IntegerType>(elemOf(raw)) || elemOf(raw).isInteger(1))
      return ic.fail("indices must be integers");
    // Negative indices count from the end: j < 0 ? j + k : j.
    indices = ic.cast(raw, ic.b.getI32Type());
    SmallVector<int64_t> ones(idxShape.size(), 1);
    Value zero = ic.splat(ic.b.getI32Type(), 0, ones);
    Value dim = ic.splat(ic.b.getI32Type(), static_cast<double>(k), ones);
    FailureOr<Value> isNeg = ic.binary("less", indices, zero);
    FailureOr<Value> wrapped = ic.binary("add", indices, dim);
    if (failed(isNeg) || failed(wrapped))
      return failure();
    indices = ic.select(*isNeg, *wrapped, indices);
  }
  ic.setOutput(0, ic.gather(v, axis, indices));
  return success();
}

/// Pad: `pads` = [begin_0, ..., begin_n, end_0, ..., end_n] over `axes`
/// (input #3 since opset 18; all axes otherwise), negative entries crop.
/// Modes: constant (constant_value, default 0), edge (repeat the border),
/// reflect (mirror without the border), wrap (opset 19: the other end).
LogicalResult importPad(ImportContext &ic, const onnx::NodeProto &) {
  Value v = ic.input(0);
  if (!v)
    return failure();
  ArrayRef<int64_t> inShape = shapeOf(v);
  int64_t rank = inShape.size();
  std::string mode = ic.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    return ic.fail("unknown mode '" + mode +
                   "' (expected constant, reflect, edge or wrap)");
  if (mode == "wrap" && ic.opset < 19)
    return ic.fail("mode 'wrap' needs opset 19 or newer");
  FailureOr<SmallVector<int64_t>> pads = ic.inputInts(1, "pads");
  if (failed(pads))
    return failure();
  SmallVector<int64_t> axes;
  if (ic.hasInput(3)) {
    if (ic.opset < 18)
      return ic.fail("the axes input needs opset 18 or newer");
    FailureOr<SmallVector<int64_t>> a = ic.inputInts(3, "axes");
    if (failed(a))
      return failure();
    for (int64_t x : *a) {
      FailureOr<int64_t> axis = ic.normAxis(x, rank);
      if (failed(axis))
        return failure();
      if (llvm::is_contained(axes, *axis))
        return ic.fail("axis " + llvm::Twine(x) + " is repeated");
      axes.push_back(*axis);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  int64_t n = axes.size();
  if (static_cast<int64_t>(pads->size()) != 2 * n)
    return ic.fail("pads has " + llvm::Twine(pads->size()) +
                   " entries, expected " + llvm::Twine(2 * n));
  Value fill;
  if (mode == "constant") {
    if (ic.hasInput(2)) {
      fill = ic.input(2);
      if (!fill)
        return failure();
      if (elemOf(fill) != elemOf(v) || product(shapeOf(fill)) != 1)
        return ic.fail("constant_value must be one element of the data's "
                       "type");
    } else {
      fill = ic.splat(elemOf(v), 0.0, {});
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t axis = axes[i], before = (*pads)[i], after = (*pads)[i + n];
    // Crop first, then extend.
    SmallVector<int64_t> shape(shapeOf(v));
    int64_t dim = shape[axis];
    int64_t cropB = std::max<int64_t>(0, -before),
            cropA = std::max<int64_t>(0, -after);
    if (cropB + cropA > dim)
      return ic.fail("negative pads remove more than dimension " +
                     llvm::Twine(axis) + " holds");
    if (cropB || cropA) {
      SmallVector<int64_t> start(rank, 0), size(shape);
      start[axis] = cropB;
      size[axis] = dim - cropB - cropA;
      v = ic.slice(v, start, size);
      shape[axis] = dim = size[axis];
    }
    before = std::max<int64_t>(0, before);
    after = std::max<int64_t>(0, after);
    if (!before && !after)
      continue;
    auto part = [&](int64_t from, int64_t count) {
      SmallVector<int64_t> start(rank, 0), size(shape);
      start[axis] = from;
      size[axis] = count;
      return ic.slice(v, start, size);
    };
    auto extent = [&](int64_t count) {
      SmallVector<int64_t> s(shape);
      s[axis] = count;
      return s;
    };
    if (mode != "constant" && dim == 0)
      return ic.fail("mode '" + mode + "' cannot pad an empty dimension");
    if ((mode == "reflect" && (before >= dim || after >= dim)) ||
        (mode == "wrap" && (before > dim || after > dim)))
      return ic.fail("mode '" + mode + "' pads of " + llvm::Twine(before) +
                     "/" + llvm::Twine(after) + " exceed dimension " +
                     llvm::Twine(axis) + " of size " + llvm::Twine(dim));
    SmallVector<Value> pieces;
    auto side = [&](int64_t count, bool isBefore) -> Value {
      if (mode == "constant")
        return ic.broadcastTo(ic.reshape(fill, SmallVector<int64_t>(rank, 1)),
                              extent(count));
      if (mode == "edge")
        return ic.broadcastTo(part(isBefore ? 0 : dim - 1, 1), extent(count));
      if (mode == "reflect")
        return ic.reverse(
            isBefore ? part(1, count) : part(dim - 1 - count, count), axis);
      return isBefore ? part(dim - count, count) : part(0, count);
    };
    if (before)
      pieces.push_back(side(before, true));
    pieces.push_back(v);
    if (after)
      pieces.push_back(side(after, false));
    v = ic.concat(pieces, axis);
  }
  ic.setOutput(0, v);
  return success();
}

LogicalResult importConstantOfShape(ImportContext &ic,
                                    const onnx::NodeProto &) {
  FailureOr<SmallVector<int64_t>> shape = ic.inputInts(0, "shape");
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return ic.fail("shape has a negative dimension");
  MLIRContext *ctx = ic.b.getContext();
  Type elem = Float32Type::get(ctx);
  double value = 0;
  if (const onnx::AttributeProto *a = ic.attr("value")) {
    std::string err;
    FailureOr<ConstTensor> t = readTensorProto(ctx, a->t(), err, ic.external);
    if (failed(t))
      return ic.fail(err);
    elem = t->elementType;
    value = t->numElements() ? t->getDouble(0) : 0.0;
  }
  if (product(*shape) > kMaxFoldElements) {
    ic.setOutput(0, ic.splat(elem, value, *shape));
    return success();
  }
  ConstTensor c = ConstTensor::zeros(elem, *shape);
  for (int64_t i = 0, e = c.numElements(); i < e; ++i)
    c.set(i, value);
  ic.setOutputConst(0, std::move(c));
  return success();
}

LogicalResult importExpand(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  FailureOr<SmallVector<int64_t>> target = ic.inputInts(1, "shape");
  if (failed(target))
    return failure();
  if (llvm::any_of(*target, [](int64_t d) { return d < 0; }))
    return ic.fail("shape has a negative dimension");
  FailureOr<SmallVector<int64_t>> shape =
      ic.broadcastShape(t.getShape(), *target);
  if (failed(shape))
    return failure();
  if (const ConstTensor *c = ic.inputConst(0)) {
    if (product(*shape) <= kMaxFoldElements) {
      int64_t rank = shape->size(), cr = c->shape.size();
      ic.setOutputConst(0, remap(*c, *shape, [&](ArrayRef<int64_t> idx) {
                          int64_t off = 0;
                          for (int64_t d = 0; d < cr; ++d) {
                            int64_t dim = c->shape[d];
                            off =
                                off * dim + (dim == 1 ? 0 : idx[rank - cr + d]);
                          }
                          return off;
                        }));
      return success();
    }
  }
  Value v = ic.input(0);
  if (!v)
    return failure();
  ic.setOutput(0, ic.broadcastTo(v, *shape));
  return success();
}

LogicalResult importTile(ImportContext &ic, const onnx::NodeProto &) {
  RankedTensorType t = ic.inputType(0);
  if (!t)
    return failure();
  FailureOr<SmallVector<int64_t>> repeats = ic.inputInts(1, "repeats");
  if (failed(repeats))
    return failure();
  if (static_cast<int64_t>(repeats->size()) != t.getRank())
    return ic.fail("repeats must have one entry per dimension");
  for (int64_t r : *repeats)
    if (r < 0)
      return ic.fail("repeats must not be negative");
  SmallVector<int64_t> shape;
  for (auto [d, r] : llvm::zip(t.getShape(), *repeats)) {
    int64_t size;
    if (llvm::MulOverflow(d, r, size))
      return ic.fail("the tiled shape has more elements than an int64 "
                     "holds");
    shape.push_back(size);
  }
  if (product(shape) > kMaxTiledElements)
    return ic.fail("the tiled shape has more than 2^48 elements");
  Value v = ic.input(0);
  if (!v)
    return failure();
  if (product(shape) == 0) {
    ic.setOutput(0, ic.emptyTensor(shape, elemOf(v)));
    return success();
  }
  if (llvm::all_of(*repeats, [](int64_t r) { return r == 1; })) {
    ic.setOutput(0, v);
    return success();
  }
  ImplicitLocOpBuilder ib(ic.loc(), ic.b);
  Value m = tosa::getTosaConstShape(ib, *repeats);
  ic.setOutput(0, tosa::TileOp::create(ic.b, ic.loc(),
                                       ic.tensorType(shape, elemOf(v)), v, m));
  return success();
}

LogicalResult importRange(ImportContext &ic, const onnx::NodeProto &) {
  const ConstTensor *start = ic.inputConst(0), *limit = ic.inputConst(1),
                    *delta = ic.inputConst(2);
  if (!start || !limit || !delta)
    return ic.fail("start, limit and delta must be known at compile time; "
                   "pass --input-shape for dynamic inputs");
  double s = start->getDouble(0), l = limit->getDouble(0),
         d = delta->getDouble(0);
  if (d == 0)
    return ic.fail("delta must not be 0");
  double count = std::ceil((l - s) / d);
  if (!std::isfinite(count) || count > double(1 << 24))
    return ic.fail("Range of " + std::to_string(count) +
                   " elements is too large to materialize as a constant");
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
  ConstTensor c = ConstTensor::zeros(start->elementType, {n});
  for (int64_t i = 0; i < n; ++i)
    c.set(i, s + i * d);
  ic.setOutputConst(0, std::move(c));
  return success();
}

} // namespace

void registerShapeOps(llvm::StringMap<OpHandler> &h) {
  h["Constant"] = importConstant;
  h["Shape"] = importShape;
  h["Size"] = importSize;
  h["Reshape"] = importReshape;
  h["Flatten"] = importFlatten;
  h["Squeeze"] = importSqueeze;
  h["Unsqueeze"] = importUnsqueeze;
  h["Transpose"] = importTranspose;
  h["Concat"] = importConcat;
  h["Slice"] = importSlice;
  h["Split"] = importSplit;
  h["Gather"] = importGather;
  h["ConstantOfShape"] = importConstantOfShape;
  h["Expand"] = importExpand;
  h["Tile"] = importTile;
  h["Range"] = importRange;
  h["Pad"] = importPad;
}

} // namespace megagraph::onnx_import
