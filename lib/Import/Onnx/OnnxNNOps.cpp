//===- OnnxNNOps.cpp - Neural-network ONNX ops ------------------*- C++ -*-===//
//
// Part of MegaGraph. MatMul, Gemm, Einsum, Softmax, LogSoftmax,
// LayerNormalization, RMSNormalization and BatchNormalization (inference).
// Softmax stays one
// op (`linalg.softmax`) so gt-raise sees attention's softmax whole;
// LayerNormalization maps straight to `gt.layer_norm`.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <cctype>
#include <map>

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
    out = *ic.binary("mul", out, ic.splat(elem, alpha, {1, 1}));
  if (ic.hasInput(2) && beta != 0.0f) {
    Value bias = ic.input(2);
    if (!bias)
      return failure();
    if (beta != 1.0f)
      bias = *ic.binary(
          "mul", bias,
          ic.splat(elem, beta, SmallVector<int64_t>(shapeOf(bias).size(), 1)));
    FailureOr<Value> sum = ic.binary("add", out, bias);
    if (failed(sum))
      return failure();
    out = *sum;
  }
  ic.setOutput(0, out);
  return success();
}

/// Einsum: explicit ("ij,jk->ik") and implicit ("ij,jk") outputs, "..."
/// broadcast dimensions, repeated indices within an operand (diagonals), and
/// any number of operands, contracted pairwise left to right. Each pairwise
/// contraction is a batched matmul (batch = indices both operands share and
/// a later operand or the output needs; contracted = shared otherwise);
/// indices used by one operand only are summed away first.
LogicalResult importEinsum(ImportContext &ic, const onnx::NodeProto &node) {
  std::string eq = ic.attrString("equation", "");
  eq.erase(std::remove_if(eq.begin(), eq.end(),
                          [](char ch) { return std::isspace(ch); }),
           eq.end());
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::optional<std::string> rhs;
  if (arrow != std::string::npos)
    rhs = eq.substr(arrow + 2);
  SmallVector<std::string> terms;
  for (StringRef t : llvm::split(StringRef(lhs), ','))
    terms.push_back(t.str());
  if (static_cast<int>(terms.size()) != node.input_size())
    return ic.fail("equation '" + eq + "' has " + llvm::Twine(terms.size()) +
                   " operands but the node has " +
                   llvm::Twine(node.input_size()) + " inputs");
  SmallVector<Value> ins;
  for (int i = 0; i < node.input_size(); ++i) {
    Value v = ic.input(i);
    if (!v)
      return failure();
    ins.push_back(v);
  }
  if (ins.size() > 1 && !isa<FloatType>(elemOf(ins[0])))
    return ic.fail("contracting Einsum needs floating-point operands");
  for (Value v : ins)
    if (elemOf(v) != elemOf(ins[0]))
      return ic.fail("operands have different element types");

  // "..." becomes internal labels '0', '1', ... (right-aligned: an operand
  // with fewer broadcast dims gets the last ones).
  int64_t ellRank = 0;
  for (auto [t, v] : llvm::zip(terms, ins)) {
    int64_t rank = shapeOf(v).size();
    size_t pos = t.find("...");
    if (pos == std::string::npos)
      continue;
    int64_t n = rank - static_cast<int64_t>(t.size() - 3);
    if (n < 0)
      return ic.fail("operand rank " + llvm::Twine(rank) +
                     " is smaller than the indices in '" + t + "'");
    ellRank = std::max(ellRank, n);
  }
  if (ellRank > 10)
    return ic.fail("'...' stands for more than 10 dimensions");
  auto ellLabels = [&](int64_t n) {
    std::string s;
    for (int64_t j = ellRank - n; j < ellRank; ++j)
      s.push_back(static_cast<char>('0' + j));
    return s;
  };
  for (auto [t, v] : llvm::zip(terms, ins)) {
    int64_t rank = shapeOf(v).size();
    size_t pos = t.find("...");
    if (pos != std::string::npos)
      t.replace(pos, 3, ellLabels(rank - static_cast<int64_t>(t.size() - 3)));
    if (static_cast<int64_t>(t.size()) != rank)
      return ic.fail("operand rank " + llvm::Twine(rank) + " does not match '" +
                     t + "'");
    for (char ch : t)
      if (!std::isalpha(ch) && !std::isdigit(ch))
        return ic.fail("invalid index '" + std::string(1, ch) + "' in '" + eq +
                       "'");
  }
  std::string out;
  if (rhs) {
    out = *rhs;
    size_t pos = out.find("...");
    if (pos != std::string::npos)
      out.replace(pos, 3, ellLabels(ellRank));
  } else {
    // Implicit output: broadcast dims, then the indices used exactly once,
    // in alphabetical order.
    out = ellLabels(ellRank);
    std::map<char, int> uses;
    for (const std::string &t : terms)
      for (char ch : t)
        if (std::isalpha(ch))
          ++uses[ch];
    for (auto [ch, n] : uses)
      if (n == 1)
        out.push_back(ch);
  }
  for (char ch : out)
    if (llvm::count(out, ch) != 1)
      return ic.fail("output index '" + std::string(1, ch) +
                     "' appears more than once");

  // Index sizes; a size-1 dimension broadcasts against a larger one.
  std::map<char, int64_t> sizes;
  for (auto [t, v] : llvm::zip(terms, ins))
    for (auto [ch, d] : llvm::zip(t, shapeOf(v))) {
      auto it = sizes.find(ch);
      if (it == sizes.end() || it->second == 1)
        sizes[ch] = d;
      else if (d != 1 && d != it->second)
        return ic.fail("index '" + std::string(1, ch) + "' has sizes " +
                       llvm::Twine(it->second) + " and " + llvm::Twine(d));
    }
  for (char ch : out)
    if (!sizes.count(ch))
      return ic.fail("output index '" + std::string(1, ch) +
                     "' does not appear in any operand");

  struct Operand {
    Value v;
    std::string t;
  };
  SmallVector<Operand> ops;
  for (auto [t, v] : llvm::zip(terms, ins)) {
    // Broadcast size-1 dims.
    SmallVector<int64_t> full;
    for (char ch : t)
      full.push_back(sizes[ch]);
    v = ic.broadcastTo(v, full);
    // Diagonals: a repeated index keeps the elements where both are equal.
    for (size_t p = 0; p < t.size(); ++p) {
      size_t q = t.find(t[p], p + 1);
      while (q != std::string::npos) {
        int64_t n = sizes[t[p]];
        SmallVector<int64_t> perm, shape;
        std::string nt;
        for (size_t d = 0; d < t.size(); ++d)
          if (d != p && d != q) {
            perm.push_back(d);
            shape.push_back(sizes[t[d]]);
            nt.push_back(t[d]);
          }
        perm.append({static_cast<int64_t>(p), static_cast<int64_t>(q)});
        shape.push_back(n * n);
        nt.push_back(t[p]);
        v = ic.reshape(ic.transpose(v, perm), shape);
        SmallVector<int64_t> diag;
        for (int64_t i = 0; i < n; ++i)
          diag.push_back(i * (n + 1));
        v = ic.gather(v, shape.size() - 1, diag);
        t = nt;
        p = 0;
        q = t.find(t[p], p + 1);
      }
    }
    ops.push_back({v, t});
  }

  auto prod = [&](const std::string &s) {
    int64_t p = 1;
    for (char ch : s)
      p *= sizes[ch];
    return p;
  };
  auto permFor = [](const std::string &from, const std::string &to) {
    SmallVector<int64_t> perm;
    for (char ch : to)
      perm.push_back(from.find(ch));
    return perm;
  };
  // Sums away the indices of ops[i] that no other operand (from `first` on)
  // and not the output use.
  auto sumUnused = [&](size_t i, size_t first) {
    Operand &o = ops[i];
    SmallVector<int64_t> axes;
    std::string kept;
    for (auto [d, ch] : llvm::enumerate(o.t)) {
      bool used = out.find(ch) != std::string::npos;
      for (size_t j = first; j < ops.size() && !used; ++j)
        used = j != i && ops[j].t.find(ch) != std::string::npos;
      if (used)
        kept.push_back(ch);
      else
        axes.push_back(d);
    }
    if (!axes.empty()) {
      o.v = ic.reduce("sum", o.v, axes, /*keepDims=*/false);
      o.t = kept;
    }
  };
  for (size_t i = 0; i < ops.size(); ++i)
    sumUnused(i, 0);
  while (ops.size() > 1) {
    sumUnused(0, 1);
    sumUnused(1, 0);
    Operand a = ops[0], c = ops[1];
    auto neededLater = [&](char ch) {
      if (out.find(ch) != std::string::npos)
        return true;
      for (size_t j = 2; j < ops.size(); ++j)
        if (ops[j].t.find(ch) != std::string::npos)
          return true;
      return false;
    };
    std::string batch, contr, freeA, freeC;
    for (char ch : a.t) {
      if (c.t.find(ch) == std::string::npos)
        freeA.push_back(ch);
      else if (neededLater(ch))
        batch.push_back(ch);
      else
        contr.push_back(ch);
    }
    for (char ch : c.t)
      if (a.t.find(ch) == std::string::npos)
        freeC.push_back(ch);
    Value a2 =
        ic.reshape(ic.transpose(a.v, permFor(a.t, batch + freeA + contr)),
                   {prod(batch), prod(freeA), prod(contr)});
    Value c2 =
        ic.reshape(ic.transpose(c.v, permFor(c.t, batch + contr + freeC)),
                   {prod(batch), prod(contr), prod(freeC)});
    FailureOr<Value> mm = ic.matmul(a2, c2);
    if (failed(mm))
      return failure();
    std::string resTerm = batch + freeA + freeC;
    SmallVector<int64_t> shape;
    for (char ch : resTerm)
      shape.push_back(sizes[ch]);
    ops.erase(ops.begin(), ops.begin() + 2);
    ops.insert(ops.begin(), Operand{ic.reshape(*mm, shape), resTerm});
  }
  sumUnused(0, 1);
  ic.setOutput(0, ic.transpose(ops[0].v, permFor(ops[0].t, out)));
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
  auto op = linalg::SoftmaxOp::create(ic.b, ic.loc(), TypeRange{v.getType()}, v,
                                      init, *axis);
  ic.setOutput(0, op.getResult()[0]);
  return success();
}

/// LayerNormalization: Y is `gt.layer_norm`. The optional Mean and
/// InvStdDev outputs (training exports ask for them) are computed separately
/// in `stash_type` (float32 by default), shaped like X with the normalized
/// dims kept as 1.
LogicalResult importLayerNorm(ImportContext &ic, const onnx::NodeProto &node) {
  Value x = ic.input(0), scale = ic.input(1);
  if (!x || !scale)
    return failure();
  if (!isa<FloatType>(elemOf(x)))
    return ic.fail("expects a floating-point input");
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  float eps = ic.attrFloat("epsilon", 1e-5f);
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
  auto op = gt::LayerNormOp::create(ic.b, ic.loc(), x, scale, bias,
                                    ic.b.getF32FloatAttr(eps));
  ic.setOutput(0, op.getResult());

  auto wanted = [&](int i) {
    return i < node.output_size() && !node.output(i).empty();
  };
  if (!wanted(1) && !wanted(2))
    return success();
  int64_t stash = ic.attrInt("stash_type", onnx::TensorProto::FLOAT);
  Type stashType = convertElementType(ic.b.getContext(), stash);
  if (!stashType || !isa<FloatType>(stashType))
    return ic.fail("stash_type " + llvm::Twine(stash) +
                   " is not a floating-point type");
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  Value xs = ic.cast(x, stashType);
  Value mean = ic.reduce("mean", xs, axes, /*keepDims=*/true);
  Value centered = *ic.binary("sub", xs, mean);
  Value var = ic.reduce("mean", *ic.binary("mul", centered, centered), axes,
                        /*keepDims=*/true);
  SmallVector<int64_t> ones(rank, 1);
  Value invStd =
      ic.unary("rsqrt", *ic.binary("add", var, ic.splat(stashType, eps, ones)));
  ic.setOutput(1, mean);
  ic.setOutput(2, invStd);
  return success();
}

/// RMSNormalization (opset 23): x / sqrt(mean(x^2) + epsilon) * scale over
/// the dimensions from `axis` on, computed in stash_type.
LogicalResult importRMSNorm(ImportContext &ic, const onnx::NodeProto &) {
  Value x = ic.input(0), scale = ic.input(1);
  if (!x || !scale)
    return failure();
  Type elem = elemOf(x);
  if (!isa<FloatType>(elem) || elemOf(scale) != elem)
    return ic.fail("X and scale must be floating-point tensors of one type");
  int64_t rank = shapeOf(x).size();
  FailureOr<int64_t> axis = ic.normAxis(ic.attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  int64_t stash = ic.attrInt("stash_type", onnx::TensorProto::FLOAT);
  Type stashType = convertElementType(ic.b.getContext(), stash);
  if (!stashType || !isa<FloatType>(stashType))
    return ic.fail("stash_type " + llvm::Twine(stash) +
                   " is not a floating-point type");
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  Value xs = ic.cast(x, stashType);
  Value meanSq = ic.reduce("mean", *ic.binary("mul", xs, xs), axes,
                           /*keepDims=*/true);
  Value inv = ic.unary(
      "rsqrt",
      *ic.binary("add", meanSq,
                 ic.scalarLike(meanSq, ic.attrFloat("epsilon", 1e-5f))));
  Value normalized = ic.cast(*ic.binary("mul", xs, inv), elem);
  FailureOr<Value> y = ic.binary("mul", normalized, scale);
  if (failed(y))
    return failure();
  if (shapeOf(*y) != shapeOf(x))
    return ic.fail("scale does not broadcast to X");
  ic.setOutput(0, *y);
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
  Value varEps =
      *ic.binary("add", params[3],
                 ic.splat(elem, eps, SmallVector<int64_t>(shape.size(), 1)));
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
  h["RMSNormalization"] = importRMSNorm;
  h["BatchNormalization"] = importBatchNorm;
}

} // namespace megagraph::onnx_import
