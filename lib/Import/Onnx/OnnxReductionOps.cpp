//===- OnnxReductionOps.cpp - Reduction ONNX ops ----------------*- C++ -*-===//
//
// Part of MegaGraph. ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSum/
// LogSumExp, ArgMax/ArgMin and CumSum. Reduction axes are an input since
// opset 13 (ReduceSum) or 18 (the others) and an attribute before; both
// must be compile-time constants. Empty axes reduce everything unless
// noop_with_empty_axes is set.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <cmath>

using namespace mlir;

namespace megagraph::onnx_import {
namespace {

/// The opset from which `opType` takes its axes as input #1 (and has
/// noop_with_empty_axes).
int64_t axesInputSince(StringRef opType) {
  return opType == "ReduceSum" ? 13 : 18;
}

/// The normalized, sorted, unique reduction axes of the node (all axes
/// when none are given), or nullopt for a no-op reduction.
FailureOr<std::optional<SmallVector<int64_t>>>
reductionAxes(ImportContext &ic, const onnx::NodeProto &node, int64_t rank) {
  bool fromInput = ic.opset >= axesInputSince(node.op_type());
  SmallVector<int64_t> axes;
  if (fromInput) {
    if (ic.attr("axes"))
      return ic.fail("the 'axes' attribute is not part of " + node.op_type() +
                     " since opset " +
                     llvm::Twine(axesInputSince(node.op_type())) +
                     " (axes are input #1)");
    if (ic.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> a = ic.inputInts(1, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
  } else {
    if (node.input_size() > 1 && ic.hasInput(1))
      return ic.fail("axes as input #1 need opset " +
                     llvm::Twine(axesInputSince(node.op_type())) +
                     " or newer; before it they are the 'axes' attribute");
    if (auto a = ic.attrInts("axes"))
      axes = *a;
  }
  if (axes.empty()) {
    if (fromInput && ic.attrInt("noop_with_empty_axes", 0))
      return std::optional<SmallVector<int64_t>>();
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  for (int64_t &a : axes) {
    FailureOr<int64_t> axis = ic.normAxis(a, rank);
    if (failed(axis))
      return failure();
    a = *axis;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return std::optional<SmallVector<int64_t>>(axes);
}

OpHandler reduceOp(StringRef kind) {
  std::string k = kind.str();
  return [k](ImportContext &ic, const onnx::NodeProto &node) -> LogicalResult {
    Value v = ic.input(0);
    if (!v)
      return failure();
    int64_t rank = shapeOf(v).size();
    FailureOr<std::optional<SmallVector<int64_t>>> axesOr =
        reductionAxes(ic, node, rank);
    if (failed(axesOr))
      return failure();
    Type elem = elemOf(v);
    bool isFloat = isa<FloatType>(elem);
    if (!isFloat && (k == "logsum" || k == "logsumexp"))
      return ic.fail("expects a floating-point input");
    if (elem.isInteger(1) && k != "max" && k != "min")
      return ic.fail("does not take bool tensors");
    if (!*axesOr || rank == 0) {
      // Reducing over no axes still applies the elementwise part:
      // sum(x^2) = x^2, sqrt(x^2) = |x|, log(x), log(exp(x)) = x.
      if (k == "sumsquare")
        v = *ic.binary("mul", v, v);
      else if (k == "l1" || k == "l2")
        v = ic.unary("abs", v);
      else if (k == "logsum")
        v = ic.unary("log", v);
      ic.setOutput(0, v);
      return success();
    }
    SmallVector<int64_t> axes = **axesOr;
    bool keep = ic.attrInt("keepdims", 1) != 0;
    Value out;
    if (k == "sumsquare" || k == "l2") {
      out = ic.reduce("sum", *ic.binary("mul", v, v), axes, keep);
      if (k == "l2")
        out = isFloat
                  ? ic.unary("sqrt", out)
                  : ic.cast(ic.unary("sqrt", ic.cast(out, ic.b.getF64Type())),
                            elem);
    } else if (k == "l1") {
      out = ic.reduce("sum", ic.unary("abs", v), axes, keep);
    } else if (k == "logsum") {
      out = ic.unary("log", ic.reduce("sum", v, axes, keep));
    } else if (k == "logsumexp") {
      // max + log(sum(exp(x - max))), finite for large inputs; a reduced
      // set that is all -inf gives -inf.
      Value max = ic.reduce("max", v, axes, /*keepDims=*/true);
      SmallVector<int64_t> ones(rank, 1);
      Value finite = *ic.binary("less", ic.unary("abs", max),
                                ic.splat(elem, INFINITY, ones));
      Value safeMax = ic.select(finite, max, ic.splat(elem, 0.0, ones));
      Value sum =
          ic.reduce("sum", ic.unary("exp", *ic.binary("sub", v, safeMax)), axes,
                    /*keepDims=*/true);
      out = *ic.binary("add", ic.unary("log", sum), safeMax);
      SmallVector<int64_t> outShape;
      for (auto [d, size] : llvm::enumerate(shapeOf(out)))
        if (keep || !llvm::is_contained(axes, static_cast<int64_t>(d)))
          outShape.push_back(size);
      out = ic.reshape(out, outShape);
    } else if (elem.isInteger(1)) {
      // Bool max/min (opset 20) are any/all: reduce as i8.
      Type i8 = ic.b.getIntegerType(8);
      out = ic.cast(ic.reduce(k, ic.cast(v, i8), axes, keep), elem);
    } else {
      out = ic.reduce(k, v, axes, keep);
    }
    ic.setOutput(0, out);
    return success();
  };
}

/// ArgMax / ArgMin along `axis` (int64 result). The first (or with
/// select_last_index the last) position holding the extreme value: the
/// smallest (largest) index where x equals the reduced max (min).
LogicalResult importArgExtreme(ImportContext &ic, const onnx::NodeProto &node) {
  Value v = ic.input(0);
  if (!v)
    return failure();
  Type elem = elemOf(v);
  if (elem.isInteger(1))
    return ic.fail("does not take bool tensors");
  ArrayRef<int64_t> shape = shapeOf(v);
  int64_t rank = shape.size();
  if (rank == 0)
    return ic.fail("expects a tensor of rank >= 1");
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  bool keep = ic.attrInt("keepdims", 1) != 0;
  bool last = ic.attrInt("select_last_index", 0) != 0;
  int64_t n = shape[*axis];
  SmallVector<int64_t> outShape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis || keep)
      outShape.push_back(d == *axis ? 1 : shape[d]);
  Type i64 = ic.b.getI64Type();
  if (n == 0)
    return ic.fail("cannot take the arg" +
                   llvm::Twine(node.op_type() == "ArgMax" ? "max" : "min") +
                   " of an empty dimension");
  Value extreme =
      ic.reduce(node.op_type() == "ArgMax" ? "max" : "min", v, {*axis}, true);
  Value hit = *ic.binary("equal", v, extreme);
  // Positions along the axis, as i32 (a tosa.reduce_min/max type).
  Type i32 = ic.b.getI32Type();
  SmallVector<int64_t> iotaShape(rank, 1);
  iotaShape[*axis] = n;
  ConstTensor iota = ConstTensor::zeros(i32, iotaShape);
  for (int64_t i = 0; i < n; ++i)
    iota.set(i, static_cast<double>(i));
  SmallVector<int64_t> ones(rank, 1);
  Value none = ic.splat(i32, last ? -1.0 : static_cast<double>(n), ones);
  Value candidates = ic.select(hit, ic.materialize(iota), none);
  Value index = ic.reduce(last ? "max" : "min", candidates, {*axis}, keep);
  ic.setOutput(0, ic.reshape(ic.cast(index, i64), outShape));
  return success();
}

/// Shifts `v` by `k` positions along `axis` towards higher indices,
/// filling with zeros.
Value shiftUp(ImportContext &ic, Value v, int64_t axis, int64_t k) {
  SmallVector<int64_t> shape(shapeOf(v));
  int64_t n = shape[axis];
  if (k >= n)
    return ic.splat(elemOf(v), 0.0, shape);
  SmallVector<int64_t> start(shape.size(), 0), size(shape);
  size[axis] = n - k;
  SmallVector<int64_t> padShape(shape);
  padShape[axis] = k;
  return ic.concat(
      {ic.splat(elemOf(v), 0.0, padShape), ic.slice(v, start, size)}, axis);
}

/// CumSum: an inclusive prefix sum by log2(n) shift-and-add steps
/// (Hillis-Steele), exact for integers; `exclusive` shifts the result by one,
/// `reverse` runs it from the end.
LogicalResult importCumSum(ImportContext &ic, const onnx::NodeProto &) {
  Value v = ic.input(0);
  if (!v)
    return failure();
  if (elemOf(v).isInteger(1))
    return ic.fail("does not take bool tensors");
  int64_t rank = shapeOf(v).size();
  if (rank == 0)
    return ic.fail("expects a tensor of rank >= 1");
  FailureOr<SmallVector<int64_t>> axisIn = ic.inputInts(1, "axis");
  if (failed(axisIn))
    return failure();
  if (axisIn->size() != 1)
    return ic.fail("axis must hold one value");
  FailureOr<int64_t> axis = ic.normAxis((*axisIn)[0], rank);
  if (failed(axis))
    return failure();
  int64_t n = shapeOf(v)[*axis];
  if (llvm::is_contained(shapeOf(v), 0)) {
    ic.setOutput(0, v);
    return success();
  }
  bool reverse = ic.attrInt("reverse", 0) != 0;
  if (reverse)
    v = ic.reverse(v, *axis);
  for (int64_t k = 1; k < n; k *= 2)
    v = *ic.binary("add", v, shiftUp(ic, v, *axis, k));
  if (ic.attrInt("exclusive", 0) != 0)
    v = shiftUp(ic, v, *axis, 1);
  if (reverse)
    v = ic.reverse(v, *axis);
  ic.setOutput(0, v);
  return success();
}

} // namespace

void registerReductionOps(llvm::StringMap<OpHandler> &h) {
  h["ReduceSum"] = reduceOp("sum");
  h["ReduceMean"] = reduceOp("mean");
  h["ReduceMax"] = reduceOp("max");
  h["ReduceMin"] = reduceOp("min");
  h["ReduceProd"] = reduceOp("prod");
  h["ReduceSumSquare"] = reduceOp("sumsquare");
  h["ReduceL1"] = reduceOp("l1");
  h["ReduceL2"] = reduceOp("l2");
  h["ReduceLogSum"] = reduceOp("logsum");
  h["ReduceLogSumExp"] = reduceOp("logsumexp");
  h["ArgMax"] = importArgExtreme;
  h["ArgMin"] = importArgExtreme;
  h["CumSum"] = importCumSum;
}

} // namespace megagraph::onnx_import
