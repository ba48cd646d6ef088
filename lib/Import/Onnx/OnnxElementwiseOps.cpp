//===- OnnxElementwiseOps.cpp - Elementwise ONNX ops ------------*- C++ -*-===//
//
// Part of MegaGraph. Arithmetic, math, logic, comparison, Where and Cast.
// Each is evaluated at import time when all inputs are compile-time constants
// (shape arithmetic), and otherwise maps to one broadcasting TOSA op.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <cmath>

using namespace mlir;

namespace megagraph::onnx_import {
namespace {

/// Largest constant the importer evaluates itself; bigger results are left
/// to the generated code.
constexpr int64_t kMaxFoldElements = 1 << 16;

/// Evaluates `fn` elementwise over numpy-broadcast constants.
std::optional<ConstTensor>
foldBroadcast(ImportContext &ic, ArrayRef<const ConstTensor *> ins,
              Type resultElem,
              llvm::function_ref<double(ArrayRef<double>)> fn) {
  SmallVector<int64_t> shape;
  for (const ConstTensor *c : ins) {
    FailureOr<SmallVector<int64_t>> s = ic.broadcastShape(shape, c->shape);
    if (failed(s))
      return std::nullopt;
    shape = *s;
  }
  ConstTensor out = ConstTensor::zeros(resultElem, shape);
  if (out.numElements() > kMaxFoldElements)
    return std::nullopt;
  int64_t rank = shape.size();
  SmallVector<int64_t> index(rank, 0);
  SmallVector<double> args(ins.size());
  for (int64_t flat = 0, e = out.numElements(); flat < e; ++flat) {
    int64_t rem = flat;
    for (int64_t d = rank - 1; d >= 0; --d) {
      index[d] = rem % shape[d];
      rem /= shape[d];
    }
    for (auto [k, c] : llvm::enumerate(ins)) {
      int64_t off = 0, cr = c->shape.size();
      for (int64_t d = 0; d < cr; ++d) {
        int64_t dim = c->shape[d];
        off = off * dim + (dim == 1 ? 0 : index[rank - cr + d]);
      }
      args[k] = c->getDouble(off);
    }
    out.set(flat, fn(args));
  }
  return out;
}

/// True when every present input is a compile-time constant.
bool allConst(ImportContext &ic, SmallVectorImpl<const ConstTensor *> &out) {
  for (int i = 0; i < ic.node->input_size(); ++i) {
    if (!ic.hasInput(i))
      continue;
    const ConstTensor *c = ic.inputConst(i);
    if (!c)
      return false;
    out.push_back(c);
  }
  return !out.empty();
}

/// Registers a binary op: constant folding with `fold`, otherwise the
/// broadcasting TOSA op `kind`.
OpHandler binaryOp(StringRef kind, bool isComparison,
                   double (*fold)(double, double, bool isFloat)) {
  std::string k = kind.str();
  return [k, isComparison, fold](ImportContext &ic,
                                 const onnx::NodeProto &) -> LogicalResult {
    SmallVector<const ConstTensor *> cs;
    if (allConst(ic, cs) && cs.size() == 2) {
      bool isFloat = cs[0]->isFloat();
      Type elem = isComparison ? ic.b.getI1Type() : cs[0]->elementType;
      if (auto r = foldBroadcast(ic, cs, elem, [&](ArrayRef<double> a) {
            return fold(a[0], a[1], isFloat);
          })) {
        ic.setOutputConst(0, std::move(*r));
        return success();
      }
    }
    Value a = ic.input(0), c = ic.input(1);
    if (!a || !c)
      return failure();
    if (elemOf(a) != elemOf(c))
      return ic.fail("operand element types differ");
    FailureOr<Value> r = ic.binary(k, a, c);
    if (failed(r))
      return failure();
    ic.setOutput(0, *r);
    return success();
  };
}

/// Registers a unary op with an optional constant fold.
OpHandler unaryOp(StringRef kind, double (*fold)(double), bool floatOnly) {
  std::string k = kind.str();
  return [k, fold, floatOnly](ImportContext &ic,
                              const onnx::NodeProto &) -> LogicalResult {
    SmallVector<const ConstTensor *> cs;
    if (fold && allConst(ic, cs) && cs.size() == 1) {
      if (auto r =
              foldBroadcast(ic, cs, cs[0]->elementType,
                            [&](ArrayRef<double> a) { return fold(a[0]); })) {
        ic.setOutputConst(0, std::move(*r));
        return success();
      }
    }
    Value v = ic.input(0);
    if (!v)
      return failure();
    if (floatOnly && !isa<FloatType>(elemOf(v)))
      return ic.fail("expects a floating-point input, got " + llvm::Twine(k));
    ic.setOutput(0, ic.unary(k, v));
    return success();
  };
}

double foldAdd(double a, double b, bool) { return a + b; }
double foldSub(double a, double b, bool) { return a - b; }
double foldMul(double a, double b, bool) { return a * b; }
double foldDiv(double a, double b, bool isFloat) {
  if (isFloat)
    return a / b;
  return b == 0 ? 0 : std::trunc(a / b);
}
double foldEqual(double a, double b, bool) { return a == b; }
double foldGreater(double a, double b, bool) { return a > b; }
double foldLess(double a, double b, bool) { return a < b; }
double foldGreaterEq(double a, double b, bool) { return a >= b; }
double foldLessEq(double a, double b, bool) { return a <= b; }
double foldAnd(double a, double b, bool) { return (a != 0) && (b != 0); }
double foldOr(double a, double b, bool) { return (a != 0) || (b != 0); }
double foldXor(double a, double b, bool) { return (a != 0) != (b != 0); }

/// Pow(X: T, Y: T1) -> T. The exponent may have another type than the base
/// (PyTorch exports x ** 2 with an integer or float exponent). tosa.pow is
/// float-only, so integer bases are computed in floating point (f64 for
/// 32/64-bit integers, whose powers f32 cannot hold exactly) and converted
/// back: rounded for an integer exponent (the exact result), truncated for
/// a float one (numpy's power(...).astype(T)).
LogicalResult importPow(ImportContext &ic, const onnx::NodeProto &) {
  SmallVector<const ConstTensor *> cs;
  if (allConst(ic, cs) && cs.size() == 2) {
    if (auto r =
            foldBroadcast(ic, cs, cs[0]->elementType, [](ArrayRef<double> a) {
              return std::pow(a[0], a[1]);
            })) {
      ic.setOutputConst(0, std::move(*r));
      return success();
    }
  }
  Value x = ic.input(0), y = ic.input(1);
  if (!x || !y)
    return failure();
  Type elem = elemOf(x), expElem = elemOf(y);
  if (elem.isInteger(1) || expElem.isInteger(1))
    return ic.fail("Pow does not take bool tensors");
  if (isa<FloatType>(elem)) {
    FailureOr<Value> r = ic.binary("pow", x, ic.cast(y, elem));
    if (failed(r))
      return failure();
    ic.setOutput(0, *r);
    return success();
  }
  Type calc = elem.getIntOrFloatBitWidth() >= 32 ? Type(ic.b.getF64Type())
                                                 : Type(ic.b.getF32Type());
  FailureOr<Value> r = ic.binary("pow", ic.cast(x, calc), ic.cast(y, calc));
  if (failed(r))
    return failure();
  Value p = *r;
  if (!isa<FloatType>(expElem)) {
    // Round: floor(p + 0.5).
    FailureOr<Value> shifted = ic.binary(
        "add", p,
        ic.splat(calc, 0.5, SmallVector<int64_t>(shapeOf(p).size(), 1)));
    if (failed(shifted))
      return failure();
    // Already integral: a plain conversion.
    p = ic.unary("floor", *shifted);
    ic.setOutput(0, tosa::CastOp::create(ic.b, ic.loc(),
                                         ic.tensorType(shapeOf(p), elem), p));
    return success();
  }
  ic.setOutput(0, ic.cast(p, elem));
  return success();
}

LogicalResult importWhere(ImportContext &ic, const onnx::NodeProto &) {
  SmallVector<const ConstTensor *> cs;
  if (allConst(ic, cs) && cs.size() == 3) {
    if (auto r =
            foldBroadcast(ic, cs, cs[1]->elementType, [](ArrayRef<double> a) {
              return a[0] != 0 ? a[1] : a[2];
            })) {
      ic.setOutputConst(0, std::move(*r));
      return success();
    }
  }
  Value pred = ic.input(0), a = ic.input(1), c = ic.input(2);
  if (!pred || !a || !c)
    return failure();
  Value out = ic.select(pred, a, c);
  if (!out)
    return failure();
  ic.setOutput(0, out);
  return success();
}

LogicalResult importCast(ImportContext &ic, const onnx::NodeProto &) {
  Type to = convertElementType(ic.b.getContext(), ic.attrInt("to", 0));
  if (!to)
    return ic.fail("unsupported target type " +
                   llvm::Twine(ic.attrInt("to", 0)));
  if (const ConstTensor *c = ic.inputConst(0)) {
    ConstTensor out = ConstTensor::zeros(to, c->shape);
    for (int64_t i = 0, e = c->numElements(); i < e; ++i) {
      double v = c->getDouble(i);
      out.set(i, isa<FloatType>(to) ? v : std::trunc(v));
    }
    ic.setOutputConst(0, std::move(out));
    return success();
  }
  Value v = ic.input(0);
  if (!v)
    return failure();
  // ic.cast has ONNX semantics: float -> int truncates, x -> bool is x != 0.
  ic.setOutput(0, ic.cast(v, to));
  return success();
}

/// Identity, and Dropout in inference (its optional mask output is all
/// true). Training-mode Dropout (a training_mode input that is not a
/// constant false) is random and is rejected.
LogicalResult importIdentity(ImportContext &ic, const onnx::NodeProto &node) {
  if (node.op_type() == "Dropout" && ic.hasInput(2)) {
    const ConstTensor *mode = ic.inputConst(2);
    if (!mode || mode->numElements() != 1 || mode->getInt(0) != 0)
      return ic.fail(
          "training-mode Dropout (training_mode is " +
          llvm::Twine(mode ? "true" : "not a compile-time constant") +
          ") is not supported; export the model in eval() mode");
  }
  if (const ConstTensor *c = ic.inputConst(0)) {
    ic.setOutputConst(0, *c);
  } else {
    Value v = ic.input(0);
    if (!v)
      return failure();
    ic.setOutput(0, v);
  }
  if (node.op_type() == "Dropout" && node.output_size() > 1 &&
      !node.output(1).empty()) {
    RankedTensorType t = ic.inputType(0);
    ConstTensor mask = ConstTensor::zeros(ic.b.getI1Type(), t.getShape());
    for (int64_t i = 0, e = mask.numElements(); i < e; ++i)
      mask.set(i, 1);
    ic.setOutputConst(1, std::move(mask));
  }
  return success();
}

/// Max / Min / Sum / Mean over a variadic list.
OpHandler variadicOp(StringRef kind) {
  std::string k = kind.str();
  return [k](ImportContext &ic, const onnx::NodeProto &node) -> LogicalResult {
    Value acc = ic.input(0);
    if (!acc)
      return failure();
    if (k == "mean" && !isa<FloatType>(elemOf(acc)))
      return ic.fail("Mean expects floating-point inputs");
    for (int i = 1; i < node.input_size(); ++i) {
      Value v = ic.input(i);
      if (!v)
        return failure();
      FailureOr<Value> r =
          ic.binary(k == "sum" || k == "mean" ? "add" : k, acc, v);
      if (failed(r))
        return failure();
      acc = *r;
    }
    if (k == "mean" && node.input_size() > 1) {
      Value scale = ic.splat(elemOf(acc), 1.0 / node.input_size(),
                             SmallVector<int64_t>(shapeOf(acc).size(), 1));
      acc = *ic.binary("mul", acc, scale);
    }
    ic.setOutput(0, acc);
    return success();
  };
}

LogicalResult importClip(ImportContext &ic, const onnx::NodeProto &) {
  Value v = ic.input(0);
  if (!v)
    return failure();
  Type elem = elemOf(v);
  if (ic.hasInput(1)) {
    Value lo = ic.input(1);
    if (!lo)
      return failure();
    v = *ic.binary("max", v, lo);
  }
  if (ic.hasInput(2)) {
    Value hi = ic.input(2);
    if (!hi)
      return failure();
    v = *ic.binary("min", v, hi);
  }
  (void)elem;
  ic.setOutput(0, v);
  return success();
}

} // namespace

void registerElementwiseOps(llvm::StringMap<OpHandler> &h) {
  h["Add"] = binaryOp("add", false, foldAdd);
  h["Sub"] = binaryOp("sub", false, foldSub);
  h["Mul"] = binaryOp("mul", false, foldMul);
  h["Div"] = binaryOp("div", false, foldDiv);
  h["Pow"] = importPow;
  h["Equal"] = binaryOp("equal", true, foldEqual);
  h["Greater"] = binaryOp("greater", true, foldGreater);
  h["Less"] = binaryOp("less", true, foldLess);
  h["GreaterOrEqual"] = binaryOp("greater_equal", true, foldGreaterEq);
  h["LessOrEqual"] = binaryOp("less_equal", true, foldLessEq);
  h["And"] = binaryOp("and", true, foldAnd);
  h["Or"] = binaryOp("or", true, foldOr);
  h["Xor"] = binaryOp("xor", true, foldXor);
  h["Sqrt"] = unaryOp(
      "sqrt", [](double x) { return std::sqrt(x); }, true);
  h["Reciprocal"] = unaryOp(
      "reciprocal", [](double x) { return 1.0 / x; }, true);
  h["Neg"] = unaryOp(
      "neg", [](double x) { return -x; }, false);
  h["Abs"] = unaryOp(
      "abs", [](double x) { return std::abs(x); }, false);
  h["Exp"] = unaryOp(
      "exp", [](double x) { return std::exp(x); }, true);
  h["Log"] = unaryOp(
      "log", [](double x) { return std::log(x); }, true);
  h["Erf"] = unaryOp(
      "erf", [](double x) { return std::erf(x); }, true);
  h["Tanh"] = unaryOp(
      "tanh", [](double x) { return std::tanh(x); }, true);
  h["Sin"] = unaryOp(
      "sin", [](double x) { return std::sin(x); }, true);
  h["Cos"] = unaryOp(
      "cos", [](double x) { return std::cos(x); }, true);
  h["Floor"] = unaryOp(
      "floor", [](double x) { return std::floor(x); }, true);
  h["Ceil"] = unaryOp(
      "ceil", [](double x) { return std::ceil(x); }, true);
  h["Sigmoid"] = unaryOp(
      "sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, true);
  h["Relu"] = unaryOp(
      "relu", [](double x) { return x > 0 ? x : 0.0; }, false);
  h["Not"] = unaryOp(
      "not", [](double x) { return double(x == 0); }, false);
  h["Where"] = importWhere;
  h["Cast"] = importCast;
  h["Identity"] = importIdentity;
  h["Dropout"] = importIdentity;
  h["Max"] = variadicOp("max");
  h["Min"] = variadicOp("min");
  h["Sum"] = variadicOp("sum");
  h["Mean"] = variadicOp("mean");
  h["Clip"] = importClip;
}

} // namespace megagraph::onnx_import
