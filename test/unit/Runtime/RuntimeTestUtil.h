//===- RuntimeTestUtil.h - Helpers of the runtime unit tests ----*- C++ -*-===//
//
// Dense host arrays with memref descriptors over them, random data, and the
// LibTorch references (TorchReference.cpp, the only file that includes
// LibTorch, to keep compile times down).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TEST_UNIT_RUNTIME_RUNTIMETESTUTIL_H
#define MEGAGRAPH_TEST_UNIT_RUNTIME_RUNTIMETESTUTIL_H

#include "megagraph/Runtime.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mgrt_test {

/// Row-major strides of `sizes`.
inline std::vector<int64_t> rowMajor(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (int i = static_cast<int>(sizes.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * sizes[i + 1];
  return s;
}

/// A memref descriptor of type Desc (e.g. mgrt_memref_f32_3) over `data`.
template <typename Desc, typename T>
Desc memref(T *data, const std::vector<int64_t> &sizes,
            std::vector<int64_t> strides = {}, int64_t offset = 0) {
  if (strides.empty())
    strides = rowMajor(sizes);
  Desc d;
  d.allocated = data;
  d.aligned = data;
  d.offset = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    d.sizes[i] = sizes[i];
    d.strides[i] = strides[i];
  }
  return d;
}

inline int64_t numel(const std::vector<int64_t> &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

inline std::vector<float> randomFloats(size_t n, unsigned seed, float lo = -1,
                                       float hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

inline float maxAbsDiff(const std::vector<float> &a,
                        const std::vector<float> &b) {
  if (a.size() != b.size())
    return 1e30f;
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    float d = std::abs(a[i] - b[i]);
    if (!(d <= m)) // NaN counts as a huge error
      m = d == d ? d : 1e30f;
  }
  return m;
}

/// Attention problem in the kernel's layout: q [B,Sq,H*dh], k [B,Sk,H*dh],
/// v [B,Sk,H*dvh]; bias / mask dense row-major with shapes biasShape /
/// maskShape (empty = absent).
struct AttentionProblem {
  int64_t B, Sq, Sk, H, dh, dvh;
  float scale;
  std::vector<float> q, k, v, bias;
  std::vector<uint8_t> mask;
  std::vector<int64_t> biasShape, maskShape;
};

/// out [B,Sq,H*dvh] from explicit scores and softmax, in double.
/// With `lse`, also writes each row's log-sum-exp of the scores in double
/// ([B, H, Sq]; -inf for a row that keeps no key).
std::vector<float> naiveAttention(const AttentionProblem &p,
                                  std::vector<double> *lse = nullptr);

/// The same through LibTorch: softmax(q k^T * scale + bias masked) @ v, with
/// fully masked rows set to 0 (torch gives NaN there).
std::vector<float> torchAttention(const AttentionProblem &p);

/// Gradients of sum(dout * attention(p)) through LibTorch autograd in
/// float64 (fully masked rows give zero gradients): dq, dk, dv in the
/// kernel's layouts and dbias with p.biasShape (empty without bias).
struct AttentionGrads {
  std::vector<float> dq, dk, dv, dbias;
};
AttentionGrads torchAttentionBackward(const AttentionProblem &p,
                                      const std::vector<float> &dout);

/// LibTorch layer_norm over the last dimension of x [R,C].
std::vector<float> torchLayerNorm(const std::vector<float> &x, int64_t R,
                                  int64_t C, const std::vector<float> &gamma,
                                  const std::vector<float> *beta, float eps);

/// A fresh empty directory under the test temp dir.
std::string makeTempDir(const std::string &tag);

} // namespace mgrt_test

#endif // MEGAGRAPH_TEST_UNIT_RUNTIME_RUNTIMETESTUTIL_H
