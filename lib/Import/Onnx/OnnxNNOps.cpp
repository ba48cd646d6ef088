//===- OnnxNNOps.cpp - Neural-network ONNX ops ------------------*- C++ -*-===//
//
// Part of MegaGraph. MatMul, Gemm, Einsum, Softmax, LogSoftmax,
// LayerNormalization and BatchNormalization (inference). Softmax stays one
// op (`linalg.softmax`) so gt-raise sees attention's softmax whole;
// LayerNormalization maps straight to `gt.layer_norm`.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

using namespace mlir;

namespace megagraph::onnx_import {
namespace {

LogicalResult importMatMul(ImportContext &ic, const onnx::NodeProto &) {
  Value a = ic.input(0), c = ic.input(1);
  if (!a || !c)
    return failure();
  if (!isa<FloatType>(elemOf(a)) || elemOf(a) != elemOf(c))
    return ic.fail("expects two floating-point operands of one type");
  FailureOr<Value> r = ic.matmul(a, c);
  if (failed(r))
    return failure();
  ic.setOutput(0, *r);
  return success();
}

LogicalResult importGemm(ImportContext &ic, const onnx::NodeProto &) {
  Value a = ic.input(0), c = ic.input(1);
  if (!a || !c)
    return failure();
  if (shapeOf(a).size() != 2 || shapeOf(c).size() != 2)
    return ic.fail("Gemm expects rank-2 A and B");
  if (ic.attrInt("transA", 0))
    a = ic.transpose(a, {1, 0});
  if (ic.attrInt("transB", 0))
    c = ic.transpose(c, {1, 0});
  FailureOr<Value> r = ic.matmul(a, c);
  if (failed(r))
    return failure();
  Value out = *r;
  Type elem = elemOf(out);
  float alpha = ic.attrFloat("alpha", 1.0f), beta = ic.attrFloat("beta", 1.0f);
  if (alpha != 1.0f)
    out = *ic.binary("mul", out, ic.splat(elem, alpha));
  if (ic.hasInput(2) && beta != 0.0f) {
    Value bias = ic.input(2);
    if (!bias)
      return failure();
    if (beta != 1.0f)
      bias = *ic.binary("mul", bias, ic.splat(elem, beta));
    FailureOr<Value> sum = ic.binary("add", out, bias);
    if (failed(sum))
      return failure();
    out = *sum;
  }
  ic.setOutput(0, out);
  return success();
}

/// Einsum without ellipses or repeated indices: contracts like a batched
/// matmul (batch = indices in both inputs and the output, contracted = in
/// both inputs only) or sums single-operand indices away.
LogicalResult importEinsum(ImportContext &ic, const onnx::NodeProto &node) {
  std::string eq = ic.attrString("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  if (arrow == std::string::npos || eq.find("...") != std::string::npos)
    return ic.fail("equation '" + eq + "' needs an explicit '->' output and "
                   "no '...'");
  std::string lhs = eq.substr(0, arrow), out = eq.substr(arrow + 2);
  SmallVector<std::string> terms;
  for (StringRef t : llvm::split(StringRef(lhs), ','))
    terms.push_back(t.str());
  if (static_cast<int>(terms.size()) != node.input_size() ||
      terms.size() > 2 || terms.empty())
    return ic.fail("equation '" + eq + "' must have one or two operands "
                   "matching the inputs");
  auto hasDup = [](const std::string &s) {
    return llvm::SmallSet<char, 8>(s.begin(), s.end()).size() != s.size();
  };
  for (const std::string &t : terms)
    if (hasDup(t))
      return ic.fail("repeated indices (traces/diagonals) are not supported");
  SmallVector<Value> ins;
  for (int i = 0; i < node.input_size(); ++i) {
    Value v = ic.input(i);
    if (!v)
      return failure();
    if (shapeOf(v).size() != terms[i].size())
      return ic.fail("operand " + llvm::Twine(i) + " rank does not match '" +
                     terms[i] + "'");
    ins.push_back(v);
  }
  llvm::DenseMap<char, int64_t> sizes;
  for (auto [t, v] : llvm::zip(terms, ins))
    for (auto [ch, d] : llvm::zip(t, shapeOf(v)))
      sizes[ch] = d;
  // Sums out indices of each operand that appear nowhere else.
  auto sumUnused = [&](Value v, std::string &t, const std::string &other) {
    SmallVector<int64_t> axes;
    std::string kept;
    for (auto [i, ch] : llvm::enumerate(t)) {
      if (other.find(ch) == std::string::npos &&
          out.find(ch) == std::string::npos)
        axes.push_back(i);
      else
        kept.push_back(ch);
    }
    t = kept;
    return axes.empty() ? v : ic.reduce("sum", v, axes, /*keepDims=*/false);
  };
  std::string t0 = terms[0], t1 = terms.size() > 1 ? terms[1] : "";
  Value a = sumUnused(ins[0], t0, t1);
  Value result;
  std::string resTerm;
  if (terms.size() == 1) {
    result = a;
    resTerm = t0;
  } else {
    Value c = sumUnused(ins[1], t1, t0);
    std::string batch, contr, freeA, freeC;
    for (char ch : t0) {
      bool inC = t1.find(ch) != std::string::npos;
      bool inOut = out.find(ch) != std::string::npos;
      if (inC && inOut)
        batch.push_back(ch);
      else if (inC)
        contr.push_back(ch);
      else
        freeA.push_back(ch);
    }
    for (char ch : t1)
      if (t0.find(ch) == std::string::npos)
        freeC.push_back(ch);
    auto permFor = [](const std::string &from, const std::string &to) {
      SmallVector<int64_t> perm;
      for (char ch : to)
        perm.push_back(from.find(ch));
      return perm;
    };
    auto prod = [&](const std::string &s) {
      int64_t p = 1;
      for (char ch : s)
        p *= sizes[ch];
      return p;
    };
    Value a2 = ic.reshape(ic.transpose(a, permFor(t0, batch + freeA + contr)),
                          {prod(batch), prod(freeA), prod(contr)});
    Value c2 = ic.reshape(ic.transpose(c, permFor(t1, batch + contr + freeC)),
                          {prod(batch), prod(contr), prod(freeC)});
    FailureOr<Value> mm = ic.matmul(a2, c2);
    if (failed(mm))
      return failure();
    resTerm = batch + freeA + freeC;
    SmallVector<int64_t> shape;
    for (char ch : resTerm)
      shape.push_back(sizes[ch]);
    result = ic.reshape(*mm, shape);
  }
  if (resTerm.size() != out.size())
    return ic.fail("output indices '" + out + "' do not match the operands");
  SmallVector<int64_t> perm;
  for (char ch : out) {
    size_t pos = resTerm.find(ch);
    if (pos == std::string::npos)
      return ic.fail("output index '" + std::string(1, ch) +
                     "' does not appear in any operand");
    perm.push_back(pos);
  }
  ic.setOutput(0, ic.transpose(result, perm));
  return success();
}

LogicalResult importSoftmax(ImportContext &ic, const onnx::NodeProto &node) {
  Value v = ic.input(0);
  if (!v)
    return failure();
  int64_t rank = shapeOf(v).size();
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  if (node.op_type() == "LogSoftmax") {
    // x - max - log(sum(exp(x - max))), numerically stable.
    Value max = ic.reduce("max", v, {*axis}, true);
    Value shifted = *ic.binary("sub", v, max);
    Value sum = ic.reduce("sum", ic.unary("exp", shifted), {*axis}, true);
    ic.setOutput(0, *ic.binary("sub", shifted, ic.unary("log", sum)));
    return success();
  }
  Value init = tensor::EmptyOp::create(ic.b, ic.loc(), shapeOf(v), elemOf(v));
  auto op = linalg::SoftmaxOp::create(ic.b, ic.loc(), TypeRange{v.getType()},
                                      v, init, *axis);
  ic.setOutput(0, op.getResult()[0]);
  return success();
}

LogicalResult importLayerNorm(ImportContext &ic, const onnx::NodeProto &node) {
  Value x = ic.input(0), scale = ic.input(1);
  if (!x || !scale)
    return failure();
  if (node.output_size() > 1)
    for (int i = 1; i < node.output_size(); ++i)
      if (!node.output(i).empty())
        return ic.fail("the Mean / InvStdDev outputs are not supported "
                       "(inference export does not need them)");
  ArrayRef<int64_t> shape = shapeOf(x);
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", -1), shape.size());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> trailing(shape.begin() + *axis, shape.end());
  Value bias;
  if (ic.hasInput(2)) {
    bias = ic.input(2);
    if (!bias)
      return failure();
    bias = ic.broadcastTo(bias, trailing);
  }
  scale = ic.broadcastTo(scale, trailing);
  if (elemOf(scale) != elemOf(x) || (bias && elemOf(bias) != elemOf(x)))
    return ic.fail("scale and bias must have the input's element type");
  auto op = gt::LayerNormOp::create(
      ic.b, ic.loc(), x, scale, bias,
      ic.b.getF32FloatAttr(ic.attrFloat("epsilon", 1e-5f)));
  ic.setOutput(0, op.getResult());
  return success();
}

LogicalResult importBatchNorm(ImportContext &ic, const onnx::NodeProto &node) {
  if (ic.attrInt("training_mode", 0) != 0)
    return ic.fail("training_mode=1 is not supported; export the model in "
                   "eval() mode");
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      return ic.fail("running mean/var outputs are not supported");
  Value x = ic.input(0);
  SmallVector<Value> params;
  for (int i = 1; i <= 4; ++i) {
    Value p = ic.input(i);
    if (!p)
      return failure();
    params.push_back(p);
  }
  if (!x)
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() < 2)
    return ic.fail("input must have a channel dimension (rank >= 2)");
  SmallVector<int64_t> paramShape(shape.size(), 1);
  paramShape[1] = shape[1];
  for (Value &p : params) {
    if (shapeOf(p).size() != 1 || shapeOf(p)[0] != shape[1])
      return ic.fail("scale, B, mean and var must be [C] = [" +
                     llvm::Twine(shape[1]) + "]");
    p = ic.reshape(p, paramShape);
  }
  Type elem = elemOf(x);
  float eps = ic.attrFloat("epsilon", 1e-5f);
  // y = (x - mean) * (scale * rsqrt(var + eps)) + B
  Value varEps = *ic.binary("add", params[3], ic.splat(elem, eps));
  Value factor = *ic.binary("mul", params[0], ic.unary("rsqrt", varEps));
  Value centered = *ic.binary("sub", x, params[2]);
  Value scaled = *ic.binary("mul", centered, factor);
  ic.setOutput(0, *ic.binary("add", scaled, params[1]));
  return success();
}

} // namespace

void registerNNOps(llvm::StringMap<OpHandler> &h) {
  h["MatMul"] = importMatMul;
  h["Gemm"] = importGemm;
  h["Einsum"] = importEinsum;
  h["Softmax"] = importSoftmax;
  h["LogSoftmax"] = importSoftmax;
  h["LayerNormalization"] = importLayerNorm;
  h["BatchNormalization"] = importBatchNorm;
}

} // namespace megagraph::onnx_import
