//===- TorchReference.cpp - LibTorch references of the kernels ------------===//
//
// The only test file that includes LibTorch (ATen), so the others compile
// fast. References run in float64.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <ATen/ATen.h>

namespace mgrt_test {

namespace {
at::Tensor fromFloats(const std::vector<float> &v,
                      const std::vector<int64_t> &shape) {
  return at::from_blob(const_cast<float *>(v.data()), shape, at::kFloat)
      .to(at::kDouble);
}

std::vector<float> toFloats(const at::Tensor &t) {
  at::Tensor c = t.to(at::kFloat).contiguous();
  return std::vector<float>(c.data_ptr<float>(),
                            c.data_ptr<float>() + c.numel());
}
} // namespace

std::vector<float> torchAttention(const AttentionProblem &p) {
  at::Tensor q = fromFloats(p.q, {p.B, p.Sq, p.H, p.dh}).permute({0, 2, 1, 3});
  at::Tensor k = fromFloats(p.k, {p.B, p.Sk, p.H, p.dh}).permute({0, 2, 1, 3});
  at::Tensor v = fromFloats(p.v, {p.B, p.Sk, p.H, p.dvh}).permute({0, 2, 1, 3});
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * p.scale;
  if (!p.biasShape.empty())
    scores = scores + fromFloats(p.bias, p.biasShape);
  if (!p.maskShape.empty()) {
    at::Tensor mask = at::from_blob(const_cast<uint8_t *>(p.mask.data()),
                                    p.maskShape, at::kByte);
    scores = scores.masked_fill(mask.eq(0), -INFINITY);
  }
  at::Tensor probs = at::softmax(scores, -1);
  probs = at::nan_to_num(probs, 0.0); // rows that keep nothing
  at::Tensor out = at::matmul(probs, v)
                       .permute({0, 2, 1, 3})
                       .reshape({p.B, p.Sq, p.H * p.dvh});
  return toFloats(out);
}

AttentionGrads torchAttentionBackward(const AttentionProblem &p,
                                      const std::vector<float> &dout) {
  at::Tensor q = fromFloats(p.q, {p.B, p.Sq, p.H, p.dh}).requires_grad_();
  at::Tensor k = fromFloats(p.k, {p.B, p.Sk, p.H, p.dh}).requires_grad_();
  at::Tensor v = fromFloats(p.v, {p.B, p.Sk, p.H, p.dvh}).requires_grad_();
  at::Tensor bias;
  at::Tensor scores =
      at::matmul(q.permute({0, 2, 1, 3}), k.permute({0, 2, 3, 1})) * p.scale;
  if (!p.biasShape.empty()) {
    bias = fromFloats(p.bias, p.biasShape).requires_grad_();
    scores = scores + bias;
  }
  at::Tensor empty; // rows that keep no key: probabilities 0, no gradient
  if (!p.maskShape.empty()) {
    at::Tensor drop = at::from_blob(const_cast<uint8_t *>(p.mask.data()),
                                    p.maskShape, at::kByte)
                          .eq(0)
                          .expand(scores.sizes());
    empty = drop.all(-1, /*keepdim=*/true);
    scores = scores.masked_fill(drop, -INFINITY).masked_fill(empty, 0.0);
  }
  at::Tensor probs = at::softmax(scores, -1);
  if (empty.defined())
    probs = probs.masked_fill(empty, 0.0);
  at::Tensor out = at::matmul(probs, v.permute({0, 2, 1, 3}))
                       .permute({0, 2, 1, 3})
                       .reshape({p.B, p.Sq, p.H * p.dvh});
  out.backward(fromFloats(dout, {p.B, p.Sq, p.H * p.dvh}));
  AttentionGrads g;
  g.dq = toFloats(q.grad()), g.dk = toFloats(k.grad());
  g.dv = toFloats(v.grad());
  if (bias.defined())
    g.dbias = toFloats(bias.grad());
  return g;
}

std::vector<float> torchLayerNorm(const std::vector<float> &x, int64_t R,
                                  int64_t C, const std::vector<float> &gamma,
                                  const std::vector<float> *beta, float eps) {
  at::Tensor out =
      at::layer_norm(fromFloats(x, {R, C}), {C}, fromFloats(gamma, {C}),
                     beta ? fromFloats(*beta, {C}) : at::Tensor(), eps);
  return toFloats(out);
}

} // namespace mgrt_test
