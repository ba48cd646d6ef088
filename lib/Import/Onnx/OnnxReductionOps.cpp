//===- OnnxReductionOps.cpp - Reduction ONNX ops ----------------*- C++ -*-===//
//
// Part of MegaGraph. ReduceSum/Mean/Max/Min/Prod/SumSquare/L2: axes come
// from an attribute (opset < 18, ReduceSum < 13) or a constant input
// (ReduceSum since 13); empty axes reduce everything unless
// noop_with_empty_axes is set.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

using namespace mlir;

namespace megagraph::onnx_import {
namespace {

OpHandler reduceOp(StringRef kind) {
  std::string k = kind.str();
  return [k](ImportContext &ic, const onnx::NodeProto &) -> LogicalResult {
    Value v = ic.input(0);
    if (!v)
      return failure();
    int64_t rank = shapeOf(v).size();
    SmallVector<int64_t> axes;
    if (ic.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> a = ic.inputInts(1, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    } else if (auto a = ic.attrInts("axes")) {
      axes = *a;
    }
    if (axes.empty()) {
      if (ic.attrInt("noop_with_empty_axes", 0)) {
        ic.setOutput(0, v);
        return success();
      }
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
    bool keep = ic.attrInt("keepdims", 1) != 0;
    if (rank == 0) {
      ic.setOutput(0, v);
      return success();
    }
    if (k == "sumsquare" || k == "l2") {
      Value sq = *ic.binary("mul", v, v);
      Value s = ic.reduce("sum", sq, axes, keep);
      ic.setOutput(0, k == "l2" ? ic.unary("sqrt", s) : s);
      return success();
    }
    ic.setOutput(0, ic.reduce(k, v, axes, keep));
    return success();
  };
}

} // namespace

void registerReductionOps(llvm::StringMap<OpHandler> &h) {
  h["ReduceSum"] = reduceOp("sum");
  h["ReduceMean"] = reduceOp("mean");
  h["ReduceMax"] = reduceOp("max");
  h["ReduceMin"] = reduceOp("min");
  h["ReduceProd"] = reduceOp("prod");
  h["ReduceSumSquare"] = reduceOp("sumsquare");
  h["ReduceL2"] = reduceOp("l2");
}

} // namespace megagraph::onnx_import
