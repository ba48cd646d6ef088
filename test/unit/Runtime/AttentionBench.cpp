//===- AttentionBench.cpp - Timings of mgrt_attention_f32 (not a test) ----===//
//
//   MegaGraphRuntimeBench [S ...]   (default 1024 2048 4096)
// B=1, H=8, D=Dv=512, no bias / mask and with a full [1,H,S,S] bias; prints
// ms per call of the kernel and of LibTorch float32 (explicit scores,
// softmax, @ v), and their max abs difference.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace mgrt_test;

namespace {

template <typename F> double bestMs(F &&f, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty())
    sizes = {1024, 2048, 4096};
  const int64_t B = 1, H = 8, D = 512, dh = D / H;
  const float scale = 1.f / std::sqrt((float)dh);
  // LibTorch on as many threads as the runtime's pool.
  at::set_num_threads(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("torch threads %d\n", at::get_num_threads());
  for (bool withBias : {false, true})
    for (int64_t S : sizes) {
      std::vector<float> q = randomFloats(B * S * D, 1),
                         k = randomFloats(B * S * D, 2),
                         v = randomFloats(B * S * D, 3), out(B * S * D);
      std::vector<float> bias =
          withBias ? randomFloats(H * S * S, 4) : std::vector<float>();
      auto od = memref<mgrt_memref_f32_3>(out.data(), {B, S, D});
      auto qd = memref<mgrt_memref_f32_3>(q.data(), {B, S, D});
      auto kd = memref<mgrt_memref_f32_3>(k.data(), {B, S, D});
      auto vd = memref<mgrt_memref_f32_3>(v.data(), {B, S, D});
      auto bd = withBias ? memref<mgrt_memref_f32_4>(bias.data(), {1, H, S, S})
                         : mgrt_memref_f32_4{};
      auto run = [&] {
        _mlir_ciface_mgrt_attention_f32(&od, &qd, &kd, &vd, &bd, nullptr, H,
                                        scale, withBias ? 1 : 0);
      };
      run(); // warm up (pool, BLAS buffers)
      mgrt_reset_peak();
      const size_t before = mgrt_current_bytes();
      double ours = bestMs(run, S >= 4096 ? 3 : 5);
      size_t scratch = mgrt_peak_bytes() - before;

      at::Tensor tq =
          at::from_blob(q.data(), {B, S, H, dh}).permute({0, 2, 1, 3});
      at::Tensor tk =
          at::from_blob(k.data(), {B, S, H, dh}).permute({0, 2, 1, 3});
      at::Tensor tv =
          at::from_blob(v.data(), {B, S, H, dh}).permute({0, 2, 1, 3});
      at::Tensor tb =
          withBias ? at::from_blob(bias.data(), {1, H, S, S}) : at::Tensor();
      at::Tensor ref;
      auto torchRun = [&] {
        at::Tensor s = at::matmul(tq, tk.transpose(-2, -1)) * scale;
        if (withBias)
          s = s + tb;
        ref = at::matmul(at::softmax(s, -1), tv);
      };
      torchRun();
      double theirs = bestMs(torchRun, S >= 4096 ? 3 : 5);
      at::Tensor refOut =
          ref.permute({0, 2, 1, 3}).reshape({B, S, D}).contiguous();
      std::vector<float> r(refOut.data_ptr<float>(),
                           refOut.data_ptr<float>() + refOut.numel());
      const double gflop = 4.0 * B * H * S * S * dh / 1e9;
      std::printf("S=%-5lld bias=%d  mgrt %8.2f ms (%6.1f GFLOP/s, scratch "
                  "%.2f MiB)  torch %8.2f ms  speedup %.2fx  max|diff| %.2e\n",
                  (long long)S, withBias, ours, gflop / ours * 1e3,
                  scratch / 1048576.0, theirs, theirs / ours,
                  maxAbsDiff(out, r));
      std::fflush(stdout);
    }
  return 0;
}
