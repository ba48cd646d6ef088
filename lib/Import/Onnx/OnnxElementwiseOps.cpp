//===- OnnxElementwiseOps.cpp - Elementwise ONNX ops ------------*- C++ -*-===//
//
// Part of MegaGraph. Arithmetic, math, logic, comparison, Where, Cast and
// the activation functions. Each is evaluated at import time when all
// inputs are compile-time constants (shape arithmetic), and otherwise maps
// to broadcasting TOSA ops; Mod, whose exact remainder TOSA cannot express,
// is an elementwise linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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
    SmallVector<const ConstTensor *> cs;
    if (allConst(ic, cs) && static_cast<int>(cs.size()) == node.input_size() &&
        (k != "mean" || cs[0]->isFloat())) {
      if (auto r = foldBroadcast(ic, cs, cs[0]->elementType,
                                 [&](ArrayRef<double> a) {
                                   double acc = a[0];
                                   for (double x : a.drop_front())
                                     acc = k == "max"   ? std::max(acc, x)
                                           : k == "min" ? std::min(acc, x)
                                                        : acc + x;
                                   return k == "mean" ? acc / a.size() : acc;
                                 })) {
        ic.setOutputConst(0, std::move(*r));
        return success();
      }
    }
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

//===----------------------------------------------------------------------===//
// Activations and other composite elementwise ops
//===----------------------------------------------------------------------===//

/// A float-only elementwise op built by `build(ic, x)` from TOSA ops.
OpHandler floatOp(Value (*build)(ImportContext &, Value)) {
  return [build](ImportContext &ic, const onnx::NodeProto &) -> LogicalResult {
    Value x = ic.input(0);
    if (!x)
      return failure();
    if (!isa<FloatType>(elemOf(x)))
      return ic.fail("expects a floating-point input");
    Value y = build(ic, x);
    if (!y)
      return failure();
    ic.setOutput(0, y);
    return success();
  };
}

Value add(ImportContext &ic, Value a, Value b) {
  return *ic.binary("add", a, b);
}
Value mul(ImportContext &ic, Value a, Value b) {
  return *ic.binary("mul", a, b);
}
Value mulBy(ImportContext &ic, Value a, double k) {
  return mul(ic, a, ic.scalarLike(a, k));
}
Value addConst(ImportContext &ic, Value a, double k) {
  return add(ic, a, ic.scalarLike(a, k));
}
Value lessThanZero(ImportContext &ic, Value x) {
  return *ic.binary("less", x, ic.scalarLike(x, 0));
}
/// clamp(x, lo, hi) as max/min (NaN-propagating like the ONNX ops).
Value clampTo(ImportContext &ic, Value x, double lo, double hi) {
  Value y = *ic.binary("max", x, ic.scalarLike(x, lo));
  return *ic.binary("min", y, ic.scalarLike(x, hi));
}
/// log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|)).
Value softplus(ImportContext &ic, Value x) {
  Value pos = *ic.binary("max", x, ic.scalarLike(x, 0));
  Value e = ic.unary("exp", ic.unary("neg", ic.unary("abs", x)));
  return add(ic, pos, ic.unary("log", addConst(ic, e, 1.0)));
}

Value buildLeakyRelu(ImportContext &ic, Value x) {
  double alpha = ic.attrFloat("alpha", 0.01f);
  return ic.select(lessThanZero(ic, x), mulBy(ic, x, alpha), x);
}
Value buildElu(ImportContext &ic, Value x) {
  double alpha = ic.attrFloat("alpha", 1.0f);
  Value neg = mulBy(ic, addConst(ic, ic.unary("exp", x), -1.0), alpha);
  return ic.select(lessThanZero(ic, x), neg, x);
}
Value buildSelu(ImportContext &ic, Value x) {
  double alpha = ic.attrFloat("alpha", 1.67326319217681884765625f);
  double gamma = ic.attrFloat("gamma", 1.05070102214813232421875f);
  Value neg = mulBy(ic, addConst(ic, ic.unary("exp", x), -1.0), alpha);
  Value nonPos = *ic.binary("less_equal", x, ic.scalarLike(x, 0));
  return mulBy(ic, ic.select(nonPos, neg, x), gamma);
}
Value buildCelu(ImportContext &ic, Value x) {
  double alpha = ic.attrFloat("alpha", 1.0f);
  // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  Value e =
      mulBy(ic, addConst(ic, ic.unary("exp", mulBy(ic, x, 1.0 / alpha)), -1.0),
            alpha);
  return add(ic, *ic.binary("max", x, ic.scalarLike(x, 0)),
             *ic.binary("min", e, ic.scalarLike(x, 0)));
}
Value buildThresholdedRelu(ImportContext &ic, Value x) {
  double alpha = ic.attrFloat("alpha", 1.0f);
  Value above = *ic.binary("greater", x, ic.scalarLike(x, alpha));
  return ic.select(above, x, ic.scalarLike(x, 0));
}
Value buildSoftplus(ImportContext &ic, Value x) { return softplus(ic, x); }
Value buildSoftsign(ImportContext &ic, Value x) {
  Value d = addConst(ic, ic.unary("abs", x), 1.0);
  return mul(ic, x, ic.unary("reciprocal", d));
}
Value buildHardSigmoid(ImportContext &ic, Value x) {
  double alpha = ic.attrFloat("alpha", 0.2f), beta = ic.attrFloat("beta", 0.5f);
  return clampTo(ic, addConst(ic, mulBy(ic, x, alpha), beta), 0.0, 1.0);
}
Value buildHardSwish(ImportContext &ic, Value x) {
  return mul(ic, x,
             clampTo(ic, addConst(ic, mulBy(ic, x, 1.0 / 6.0), 0.5), 0.0, 1.0));
}
Value buildMish(ImportContext &ic, Value x) {
  return mul(ic, x, ic.unary("tanh", softplus(ic, x)));
}
/// Gelu (opset 20): x/2 * (1 + erf(x / sqrt(2))), or with approximate =
/// "tanh" x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))). The exact form
/// is the Div/Erf/Add/Mul pattern PyTorch exports before opset 20, which
/// gt-raise recognizes.
Value buildGelu(ImportContext &ic, Value x) {
  std::string approx = ic.attrString("approximate", "none");
  Value inner;
  if (approx == "none") {
    inner = ic.unary("erf", mulBy(ic, x, M_SQRT1_2));
  } else if (approx == "tanh") {
    Value cube = mul(ic, mul(ic, x, x), x);
    Value arg = add(ic, x, mulBy(ic, cube, 0.044715));
    inner = ic.unary("tanh", mulBy(ic, arg, std::sqrt(2.0 / M_PI)));
  } else {
    (void)ic.fail("unknown approximate '" + approx +
                  "' (expected none or tanh)");
    return Value();
  }
  return mulBy(ic, mul(ic, x, addConst(ic, inner, 1.0)), 0.5);
}

/// PRelu(x, slope): x < 0 ? slope * x : x, slope broadcasting to x.
LogicalResult importPRelu(ImportContext &ic, const onnx::NodeProto &) {
  Value x = ic.input(0), slope = ic.input(1);
  if (!x || !slope)
    return failure();
  if (elemOf(x) != elemOf(slope))
    return ic.fail("slope must have the input's element type");
  FailureOr<Value> scaled = ic.binary("mul", x, slope);
  if (failed(scaled))
    return failure();
  ic.setOutput(0, ic.select(lessThanZero(ic, x), *scaled, x));
  return success();
}

/// Sign: -1, 0 or 1 (NaN stays NaN).
LogicalResult importSign(ImportContext &ic, const onnx::NodeProto &) {
  Value x = ic.input(0);
  if (!x)
    return failure();
  if (elemOf(x).isInteger(1))
    return ic.fail("does not take bool tensors");
  Value pos = *ic.binary("greater", x, ic.scalarLike(x, 0));
  Value y =
      ic.select(lessThanZero(ic, x), ic.scalarLike(x, -1), ic.scalarLike(x, 0));
  y = ic.select(pos, ic.scalarLike(x, 1), y);
  if (isa<FloatType>(elemOf(x)))
    y = ic.select(*ic.binary("equal", x, x), y, x);
  ic.setOutput(0, y);
  return success();
}

/// IsNaN: x != x.
LogicalResult importIsNaN(ImportContext &ic, const onnx::NodeProto &) {
  Value x = ic.input(0);
  if (!x)
    return failure();
  if (!isa<FloatType>(elemOf(x)))
    return ic.fail("expects a floating-point input");
  ic.setOutput(0, ic.unary("not", *ic.binary("equal", x, x)));
  return success();
}

/// IsInf: x == +inf (detect_positive) or x == -inf (detect_negative).
LogicalResult importIsInf(ImportContext &ic, const onnx::NodeProto &) {
  Value x = ic.input(0);
  if (!x)
    return failure();
  if (!isa<FloatType>(elemOf(x)))
    return ic.fail("expects a floating-point input");
  bool pos = ic.attrInt("detect_positive", 1) != 0;
  bool neg = ic.attrInt("detect_negative", 1) != 0;
  Value y;
  if (pos)
    y = *ic.binary("equal", x, ic.scalarLike(x, INFINITY));
  if (neg) {
    Value n = *ic.binary("equal", x, ic.scalarLike(x, -INFINITY));
    y = y ? *ic.binary("or", y, n) : n;
  }
  if (!y)
    y = ic.splat(ic.b.getI1Type(), 0, shapeOf(x));
  ic.setOutput(0, y);
  return success();
}

/// Mod: with fmod = 1 the truncated remainder (C fmod, sign of the
/// dividend), with fmod = 0 (integers only) the floored one (Python %,
/// sign of the divisor). An integer remainder by zero is 0 (numpy).
LogicalResult importMod(ImportContext &ic, const onnx::NodeProto &) {
  Value a = ic.input(0), c = ic.input(1);
  if (!a || !c)
    return failure();
  Type elem = elemOf(a);
  if (elemOf(c) != elem)
    return ic.fail("operand element types differ");
  if (elem.isInteger(1))
    return ic.fail("does not take bool tensors");
  bool fmod = ic.attrInt("fmod", 0) != 0;
  bool isFloat = isa<FloatType>(elem);
  if (isFloat && !fmod)
    return ic.fail("fmod=0 is defined for integers only; floating-point "
                   "inputs need fmod=1");
  SmallVector<const ConstTensor *> cs;
  if (allConst(ic, cs) && cs.size() == 2) {
    if (auto r = foldBroadcast(ic, cs, elem, [&](ArrayRef<double> v) {
          if (isFloat)
            return std::fmod(v[0], v[1]);
          int64_t x = static_cast<int64_t>(v[0]),
                  y = static_cast<int64_t>(v[1]);
          if (y == 0)
            return 0.0;
          int64_t m = x % y;
          if (!fmod && m != 0 && (m < 0) != (y < 0))
            m += y;
          return static_cast<double>(m);
        })) {
      ic.setOutputConst(0, std::move(*r));
      return success();
    }
  }
  Value out = ic.elementwise(
      {a, c}, elem, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value x = args[0], y = args[1];
        if (isFloat)
          return arith::RemFOp::create(b, l, x, y);
        Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(elem, 0));
        Value one = arith::ConstantOp::create(b, l, b.getIntegerAttr(elem, 1));
        Value byZero =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, y, zero);
        Value safe = arith::SelectOp::create(b, l, byZero, one, y);
        Value r = arith::RemSIOp::create(b, l, x, safe);
        r = arith::SelectOp::create(b, l, byZero, zero, r);
        if (fmod)
          return r;
        // Floored: add the divisor when the remainder is non-zero and its
        // sign differs from the divisor's.
        Value rNeg =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, r, zero);
        Value yNeg =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, y, zero);
        Value nonZero =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, r, zero);
        Value differ = arith::XOrIOp::create(b, l, rNeg, yNeg);
        Value fix = arith::AndIOp::create(b, l, nonZero, differ);
        return arith::SelectOp::create(b, l, fix,
                                       arith::AddIOp::create(b, l, r, y), r);
      });
  if (!out)
    return failure();
  ic.setOutput(0, out);
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
  h["LeakyRelu"] = floatOp(buildLeakyRelu);
  h["Elu"] = floatOp(buildElu);
  h["Selu"] = floatOp(buildSelu);
  h["Celu"] = floatOp(buildCelu);
  h["ThresholdedRelu"] = floatOp(buildThresholdedRelu);
  h["Softplus"] = floatOp(buildSoftplus);
  h["Softsign"] = floatOp(buildSoftsign);
  h["HardSigmoid"] = floatOp(buildHardSigmoid);
  h["HardSwish"] = floatOp(buildHardSwish);
  h["Mish"] = floatOp(buildMish);
  h["Gelu"] = floatOp(buildGelu);
  h["PRelu"] = importPRelu;
  h["Sign"] = importSign;
  h["IsNaN"] = importIsNaN;
  h["IsInf"] = importIsInf;
  h["Mod"] = importMod;
}

} // namespace megagraph::onnx_import
