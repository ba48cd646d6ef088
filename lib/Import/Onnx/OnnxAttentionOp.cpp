//===- OnnxAttentionOp.cpp - The ONNX Attention op (opset 23) ---*- C++ -*-===//
//
// Part of MegaGraph. Attention is what PyTorch exports for
// F.scaled_dot_product_attention at opset 23. It is imported as the ops an
// older export decomposes it into: softmax(scale * Q K^T + bias) V with
// tosa.matmul and one linalg.softmax over the keys, the form gt-raise
// turns into gt.attention. The bias combines the attention mask (bool:
// false is -inf; float: added) and the causal mask. 3D inputs [B, S,
// heads * D] are split into heads by q_num_heads / kv_num_heads; fewer
// key/value heads than query heads (GQA, MQA) are repeated head by head.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;

namespace megagraph::onnx_import {
namespace {

/// [B, S, H * D] -> [B, H, S, D].
Value splitHeads(ImportContext &ic, Value v, int64_t heads) {
  ArrayRef<int64_t> s = shapeOf(v);
  Value r = ic.reshape(v, {s[0], s[1], heads, s[2] / heads});
  return ic.transpose(r, {0, 2, 1, 3});
}

/// [B, Hkv, S, D] -> [B, Hkv * rep, S, D], each head repeated `rep` times
/// in place (head h serves query heads h * rep ... h * rep + rep - 1).
Value repeatHeads(ImportContext &ic, Value v, int64_t rep) {
  if (rep == 1)
    return v;
  ArrayRef<int64_t> s = shapeOf(v);
  Value r = ic.reshape(v, {s[0], s[1], 1, s[2], s[3]});
  r = ic.broadcastTo(r, {s[0], s[1], rep, s[2], s[3]});
  return ic.reshape(r, {s[0], s[1] * rep, s[2], s[3]});
}

LogicalResult importAttention(ImportContext &ic, const onnx::NodeProto &node) {
  Value q = ic.input(0), k = ic.input(1), v = ic.input(2);
  if (!q || !k || !v)
    return failure();
  Type elem = elemOf(q);
  if (!isa<FloatType>(elem) || elemOf(k) != elem || elemOf(v) != elem)
    return ic.fail("Q, K and V must be floating-point tensors of one type");
  int64_t rank = shapeOf(q).size();
  if (rank != 3 && rank != 4)
    return ic.fail("Q, K and V must be 3D [batch, seq, hidden] or 4D "
                   "[batch, heads, seq, head_size]");
  if (static_cast<int64_t>(shapeOf(k).size()) != rank ||
      static_cast<int64_t>(shapeOf(v).size()) != rank)
    return ic.fail("Q, K and V must have the same rank");
  if (ic.attrFloat("softcap", 0.0f) < 0.0f)
    return ic.fail("softcap must not be negative");
  bool hasPast = ic.hasInput(4) || ic.hasInput(5);
  if (hasPast && !(ic.hasInput(4) && ic.hasInput(5)))
    return ic.fail("past_key and past_value must be given together");
  bool causal = ic.attrInt("is_causal", 0) != 0;
  if (hasPast && causal)
    return ic.fail("is_causal with a past key/value cache is not supported; "
                   "export without the KV cache (one full forward pass) or "
                   "pass the causal mask as attn_mask");
  int64_t mode = ic.attrInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return ic.fail("qk_matmul_output_mode must be 0, 1, 2 or 3");

  // 1. Heads: everything as [B, H, S, D].
  if (rank == 3) {
    int64_t qh = ic.attrInt("q_num_heads", 0),
            kvh = ic.attrInt("kv_num_heads", 0);
    if (qh < 1 || kvh < 1)
      return ic.fail("3D inputs need the q_num_heads and kv_num_heads "
                     "attributes");
    if (shapeOf(q)[2] % qh || shapeOf(k)[2] % kvh || shapeOf(v)[2] % kvh)
      return ic.fail("the hidden sizes of Q, K and V must be divisible by "
                     "their numbers of heads");
    q = splitHeads(ic, q, qh);
    k = splitHeads(ic, k, kvh);
    v = splitHeads(ic, v, kvh);
  }
  ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(k), vs = shapeOf(v);
  int64_t batch = qs[0], qHeads = qs[1], sq = qs[2], dh = qs[3];
  if (ks[0] != batch || vs[0] != batch)
    return ic.fail("Q, K and V must have the same batch size");
  if (ks[3] != dh)
    return ic.fail("Q and K must have the same head size (" + llvm::Twine(dh) +
                   " vs " + llvm::Twine(ks[3]) + ")");
  if (ks[1] != vs[1] || ks[2] != vs[2])
    return ic.fail("K and V must have the same heads and sequence length");
  if (ks[1] < 1 || qHeads % ks[1])
    return ic.fail("the query heads (" + llvm::Twine(qHeads) +
                   ") must be a multiple of the key/value heads (" +
                   llvm::Twine(ks[1]) + ")");
  if (hasPast) {
    Value pk = ic.input(4), pv = ic.input(5);
    if (!pk || !pv)
      return failure();
    ArrayRef<int64_t> pks = shapeOf(pk), pvs = shapeOf(pv);
    if (pks.size() != 4 || pvs.size() != 4 || pks[0] != batch ||
        pks[1] != ks[1] || pks[3] != dh || pvs[0] != batch || pvs[1] != vs[1] ||
        pvs[3] != vs[3] || pks[2] != pvs[2])
      return ic.fail("past_key / past_value must be [batch, kv_heads, "
                     "past_seq, head_size] matching K and V");
    k = ic.concat({pk, k}, 2);
    v = ic.concat({pv, v}, 2);
  }
  ic.setOutput(1, k);
  ic.setOutput(2, v);
  int64_t sk = shapeOf(k)[2];
  int64_t rep = qHeads / shapeOf(k)[1];
  k = repeatHeads(ic, k, rep);
  v = repeatHeads(ic, v, rep);

  // 2. Scores: scale * Q K^T, [B, H, Sq, Sk].
  double scale = ic.attr("scale") ? ic.attrFloat("scale", 1.0f)
                                  : 1.0 / std::sqrt(static_cast<double>(dh));
  FailureOr<Value> qk = ic.matmul(q, ic.transpose(k, {0, 1, 3, 2}));
  if (failed(qk))
    return failure();
  Value scores = *ic.binary("mul", *qk, ic.scalarLike(*qk, scale));
  Value qkOut = scores;

  // 3. Bias: the attention mask (its key dimension may be shorter than the
  //    keys; the rest is masked) and the causal mask (query i sees keys
  //    j <= i).
  SmallVector<int64_t> ones(4, 1);
  Value bias;
  if (ic.hasInput(3)) {
    Value mask = ic.input(3);
    if (!mask)
      return failure();
    Type me = elemOf(mask);
    if (!me.isInteger(1) && me != elem)
      return ic.fail("attn_mask must be bool or of Q's element type");
    if (shapeOf(mask).empty() || shapeOf(mask).size() > 4)
      return ic.fail("attn_mask must have rank 1 to 4");
    mask = ic.expandRank(mask, 4);
    int64_t mk = shapeOf(mask)[3];
    if (mk > sk)
      return ic.fail("attn_mask has " + llvm::Twine(mk) +
                     " key positions, more than the " + llvm::Twine(sk) +
                     " keys");
    if (me.isInteger(1))
      mask = ic.select(mask, ic.splat(elem, 0.0, ones),
                       ic.splat(elem, -INFINITY, ones));
    if (mk < sk) {
      SmallVector<int64_t> pad(shapeOf(mask));
      pad[3] = sk - mk;
      mask = ic.concat({mask, ic.splat(elem, -INFINITY, pad)}, 3);
    }
    bias = mask;
  }
  if (causal) {
    ConstTensor tri = ConstTensor::zeros(elem, {1, 1, sq, sk});
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = i + 1; j < sk; ++j)
        tri.set(i * sk + j, -INFINITY);
    Value c = ic.materialize(tri);
    bias = bias ? *ic.binary("add", bias, c) : c;
  }
  if (bias) {
    FailureOr<Value> withBias = ic.binary("add", scores, bias);
    if (failed(withBias))
      return failure();
    if (shapeOf(*withBias) != shapeOf(scores))
      return ic.fail("attn_mask does not broadcast to [batch, heads, q_seq, "
                     "kv_seq]");
    scores = *withBias;
  }
  if (mode == 1)
    qkOut = scores;
  if (float cap = ic.attrFloat("softcap", 0.0f); cap > 0.0f) {
    // cap * tanh(scores / cap)
    Value t = ic.unary(
        "tanh", *ic.binary("mul", scores, ic.scalarLike(scores, 1.0 / cap)));
    scores = *ic.binary("mul", t, ic.scalarLike(t, cap));
    if (mode == 2)
      qkOut = scores;
  }

  // 4. Softmax over the keys (in softmax_precision), then P V.
  Type softmaxType = elem;
  if (const onnx::AttributeProto *p = ic.attr("softmax_precision")) {
    softmaxType = convertElementType(ic.b.getContext(), p->i());
    if (!softmaxType || !isa<FloatType>(softmaxType))
      return ic.fail("softmax_precision must be a floating-point type");
  }
  Value z = ic.cast(scores, softmaxType);
  Value init = tensor::EmptyOp::create(ic.b, ic.loc(), shapeOf(z), elemOf(z));
  Value probs =
      linalg::SoftmaxOp::create(ic.b, ic.loc(), TypeRange{z.getType()}, z, init,
                                /*dimension=*/3)
          .getResult()[0];
  probs = ic.cast(probs, elem);
  if (mode == 3)
    qkOut = probs;
  FailureOr<Value> y = ic.matmul(probs, v);
  if (failed(y))
    return failure();
  Value out = *y;
  if (rank == 3) {
    ArrayRef<int64_t> os = shapeOf(out);
    out = ic.reshape(ic.transpose(out, {0, 2, 1, 3}),
                     {os[0], os[2], os[1] * os[3]});
  }
  ic.setOutput(0, out);
  ic.setOutput(3, qkOut);
  (void)node;
  return success();
}

} // namespace

void registerAttentionOps(llvm::StringMap<OpHandler> &h) {
  h["Attention"] = importAttention;
}

} // namespace megagraph::onnx_import
