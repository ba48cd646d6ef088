//===- CpAttention.cu - Context-parallel attention on GPUs ----------------===//
//
// The CUDA versions of the context-parallel attention calls of compiled code
// (megagraph/RuntimeCp.h; gt-gpu-offload renames mgrt_cp_attention_f32 to
// mgrt_cuda_cp_attention_f32): the algorithms of runtime/cp on device
// buffers, the keys and values moving over the NCCL group of the cp axes,
// the attention of each block on the fused CUDA kernels (Attention.cu).
//
//  * all-gather: K and V of every rank gathered into [B,S,D] / [B,S,Dv];
//    one forward of the local queries against all keys; the backward's dK /
//    dV of all keys reduce-scattered to their owners.
//  * ring: C steps, each attending to the block held and passing it on to
//    rank r + 1. The forward merges each block's output through the row
//    log-sum-exps (the CPU variant's merge, on the device); the backward
//    runs that forward for the full output and statistics, then sends each
//    block around with its dK / dV accumulator. Transfers and attention
//    alternate: each transfer waits for the work queued before it (the
//    NCCL group orders itself after the default stream), so unlike the
//    CPU variant a step's transfer does not overlap its attention.
//
// The bias and mask stay where they are; each block reads their key
// columns through a view. Row counts (possibly uneven) are gathered over
// the MPI group of the same processes.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.cuh"
#include "StepCalls.cuh"

#include "comm/ShardCalls.h"
#include "megagraph/RuntimeCp.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace mgrt::cuda;
using mgrt::comm::ShardGrid;

constexpr const char *kFwd = "mgrt_cuda_cp_attention_f32";
constexpr const char *kBwd = "mgrt_cuda_cp_attention_bwd_f32";

/// Ends the job (every rank) with "CALL: MESSAGE".
[[noreturn]] void fatal(const char *call, const std::string &message) {
  mgrt_comm_abort((std::string(call) + ": " + message).c_str(), 3);
  std::abort();
}

/// Runs a communication call in abort mode.
template <typename F> void comm(F f) {
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_ABORT);
  f();
  mgrt_comm_set_error_mode(prev);
}

/// A device float buffer (mgrt_cuda_alloc, so the device peak counts it).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(size_t floats, const char *call) {
    if (!floats)
      return;
    data_ = static_cast<float *>(mgrt_cuda_alloc(floats * sizeof(float)));
    if (!data_)
      fatal(call, "out of device memory (" +
                      std::to_string(floats * sizeof(float)) + " bytes)");
  }
  DeviceBuffer(DeviceBuffer &&o) noexcept : data_(o.data_) {
    o.data_ = nullptr;
  }
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept {
    std::swap(data_, o.data_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { reset(); }
  void reset() {
    mgrt_cuda_free(data_); // cudaFree waits for the kernels using it
    data_ = nullptr;
  }
  float *data() const { return data_; }

private:
  float *data_ = nullptr;
};

/// The row blocks of the group: rank r holds global rows
/// [first[r], first[r] + rows[r]) of every sequence.
struct Layout {
  int size = 1, rank = 0;
  std::vector<int64_t> rows, first;
  int64_t total = 0, maxRows = 0;
};

/// The groups of a call: MPI for the row counts, NCCL for the data.
struct Groups {
  mgrt_comm_group *host = nullptr, *device = nullptr;
};

Groups groupsOf(const ShardGrid &grid, const char *call) {
  return {mgrt::comm::shardGroup(grid, call),
          mgrt::comm::deviceShardGroup(grid, call)};
}

Layout layoutOf(mgrt_comm_group *host, int64_t rows) {
  Layout l;
  l.size = mgrt_comm_size(host);
  l.rank = mgrt_comm_rank(host);
  l.rows.assign(l.size, 0);
  comm([&] {
    mgrt_comm_all_gather(host, &rows, 1, l.rows.data(), nullptr, MGRT_I64);
  });
  l.first.assign(l.size, 0);
  for (int r = 0; r < l.size; ++r) {
    l.first[r] = l.total;
    l.total += l.rows[r];
    l.maxRows = std::max(l.maxRows, l.rows[r]);
  }
  return l;
}

/// Checks what the kernels cannot see: the mode, heads, the row blocks of
/// q, k, v and the key dimension of bias / mask / dbias against S.
void check(const char *call, int64_t mode, const mgrt_memref_f32_3 *q,
           const mgrt_memref_f32_3 *k, const mgrt_memref_f32_3 *v,
           const mgrt_memref_f32_4 *bias, const mgrt_memref_i8_4 *mask,
           const mgrt_memref_f32_4 *dbias, int64_t numHeads, int64_t flags,
           const Layout &l) {
  if (mode != MGRT_CP_ALLGATHER && mode != MGRT_CP_RING)
    fatal(call, "unknown mode " + std::to_string(mode));
  if (numHeads <= 0 || q->sizes[2] % numHeads || v->sizes[2] % numHeads)
    fatal(call, std::to_string(numHeads) +
                    " heads do not divide D=" + std::to_string(q->sizes[2]) +
                    " and Dv=" + std::to_string(v->sizes[2]));
  if (k->sizes[0] != q->sizes[0] || v->sizes[0] != q->sizes[0] ||
      k->sizes[1] != q->sizes[1] || v->sizes[1] != q->sizes[1] ||
      k->sizes[2] != q->sizes[2])
    fatal(call, "q, k and v must hold the same rows");
  auto keysOk = [&](int64_t n) { return n == l.total || n == 1; };
  if ((flags & MGRT_ATTENTION_BIAS) && bias && !keysOk(bias->sizes[3]))
    fatal(call, "bias key dimension is " + std::to_string(bias->sizes[3]) +
                    ", expected 1 or S=" + std::to_string(l.total));
  if ((flags & MGRT_ATTENTION_MASK) && mask && !keysOk(mask->sizes[3]))
    fatal(call, "mask key dimension is " + std::to_string(mask->sizes[3]) +
                    ", expected 1 or S=" + std::to_string(l.total));
  if ((flags & MGRT_ATTENTION_DBIAS) && dbias && !keysOk(dbias->sizes[3]))
    fatal(call, "dbias key dimension is " + std::to_string(dbias->sizes[3]) +
                    ", expected 1 or S=" + std::to_string(l.total));
}

mgrt_memref_f32_3 desc3(float *data, int64_t d0, int64_t d1, int64_t d2) {
  mgrt_memref_f32_3 d{};
  d.allocated = d.aligned = data;
  d.sizes[0] = d0, d.sizes[1] = d1, d.sizes[2] = d2;
  d.strides[0] = d1 * d2, d.strides[1] = d2, d.strides[2] = 1;
  return d;
}

bool isContiguous(const mgrt_memref_f32_3 *d) {
  return (d->sizes[2] <= 1 || d->strides[2] == 1) &&
         (d->sizes[1] <= 1 || d->strides[1] == d->sizes[2]) &&
         (d->sizes[0] <= 1 || d->strides[0] == d->sizes[1] * d->sizes[2]);
}

/// Copies `src` (any strides) into the contiguous array `dst`, and back.
void pack(const mgrt_memref_f32_3 *src, float *dst, const char *call) {
  copy(dst, contiguous(src->sizes[1], src->sizes[2]),
       src->aligned + src->offset, viewOf(src), src->sizes[0], src->sizes[1],
       src->sizes[2], call);
}
void unpack(const float *src, mgrt_memref_f32_3 *dst, const char *call) {
  copy(dst->aligned + dst->offset, viewOf(dst), src,
       contiguous(dst->sizes[1], dst->sizes[2]), dst->sizes[0], dst->sizes[1],
       dst->sizes[2], call);
}

/// Key columns [j0, j0 + n) of a bias, mask or dbias descriptor (the
/// descriptor itself when its key dimension is broadcast).
template <typename Desc> Desc keySlice(const Desc *d, int64_t j0, int64_t n) {
  Desc s = *d;
  if (d->sizes[3] != 1) {
    s.offset += j0 * d->strides[3];
    s.sizes[3] = n;
  }
  return s;
}

__global__ void fillKernel(float *p, int64_t n, float value) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x)
    p[t] = value;
}

void fill(float *p, int64_t n, float value, const char *call) {
  if (n <= 0)
    return;
  fillKernel<<<gridFor(n), 256>>>(p, n, value);
  MGRT_CUDA_LAUNCHED(call);
}

__global__ void addKernel(float *dst, const float *src, int64_t n) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x)
    dst[t] += src[t];
}

/// dst[i] += src[i], i < n (both contiguous).
void addInto(float *dst, const float *src, int64_t n, const char *call) {
  if (n <= 0)
    return;
  addKernel<<<gridFor(n), 256>>>(dst, src, n);
  MGRT_CUDA_LAUNCHED(call);
}

/// Zeroes every element of `d` through its strides.
void zero3(mgrt_memref_f32_3 *d, const char *call) {
  DeviceBuffer zero(1, call);
  fill(zero.data(), 1, 0.f, call);
  copy(d->aligned + d->offset, viewOf(d), zero.data(), {{0, 0, 0}}, d->sizes[0],
       d->sizes[1], d->sizes[2], call);
}

/// A [B,H,Sq,Sk] float32 view through element strides.
struct View4 {
  int64_t n[4], s[4];
};

View4 view4Of(const mgrt_memref_f32_4 *m) {
  View4 v;
  for (int d = 0; d < 4; ++d)
    v.n[d] = m->sizes[d], v.s[d] = m->strides[d];
  return v;
}

__global__ void add4Kernel(float *dst, View4 d, const float *src) {
  const int64_t n = d.n[0] * d.n[1] * d.n[2] * d.n[3];
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    int64_t rest = t, off = 0;
    for (int k = 3; k >= 0; --k) {
      off += (rest % d.n[k]) * d.s[k];
      rest /= d.n[k];
    }
    dst[off] += src[t];
  }
}

__global__ void zero4Kernel(float *dst, View4 d) {
  const int64_t n = d.n[0] * d.n[1] * d.n[2] * d.n[3];
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    int64_t rest = t, off = 0;
    for (int k = 3; k >= 0; --k) {
      off += (rest % d.n[k]) * d.s[k];
      rest /= d.n[k];
    }
    dst[off] = 0.f;
  }
}

int64_t numel(const View4 &v) { return v.n[0] * v.n[1] * v.n[2] * v.n[3]; }

/// The merge of a block's partial output oT [B,S_r,Dv] (contiguous) and
/// row log-sum-exps lseT [B,H,S_r] into out (through its strides) and lse:
///   m = max(L, L_t); w = e^(L-m), w_t = e^(L_t-m);
///   O = (w O + w_t O_t) / (w + w_t)
/// +inf marks a row without keys (so far, or in the block), as the CUDA
/// kernels write it. Two kernels: outputs first (reading L), then L.
__global__ void mergeOutKernel(float *out, View3 o, const float *oT,
                               const float *lse, const float *lseT, int64_t B,
                               int64_t Sr, int64_t Dv, int64_t H) {
  const int64_t n = B * Sr * Dv, dvh = Dv / H;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = t % Dv, i = (t / Dv) % Sr, b = t / (Sr * Dv);
    const int64_t row = (b * H + c / dvh) * Sr + i;
    const float lt = lseT[row], la = lse[row];
    if (isinf(lt) && lt > 0)
      continue; // the block keeps no key of this row
    float &dst = out[b * o.s[0] + i * o.s[1] + c * o.s[2]];
    if (isinf(la) && la > 0) {
      dst = oT[t];
      continue;
    }
    const float m = fmaxf(la, lt);
    const float wa = expf(la - m), wt = expf(lt - m);
    dst = (dst * wa + oT[t] * wt) / (wa + wt);
  }
}

__global__ void mergeLseKernel(float *lse, const float *lseT, int64_t rows) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < rows;
       t += (int64_t)gridDim.x * blockDim.x) {
    const float lt = lseT[t], la = lse[t];
    if (isinf(lt) && lt > 0)
      continue;
    if (isinf(la) && la > 0) {
      lse[t] = lt;
      continue;
    }
    const float m = fmaxf(la, lt);
    lse[t] = m + logf(expf(la - m) + expf(lt - m));
  }
}

//===-- All-gather --------------------------------------------------------===//

/// All-gathers x [B,S_r,d] into the contiguous [B,S,d] array `full`.
void gatherKeys(mgrt_comm_group *group, const Layout &l,
                const mgrt_memref_f32_3 *x, float *full, const char *call) {
  const int64_t B = x->sizes[0], Sr = x->sizes[1], d = x->sizes[2];
  DeviceBuffer packed;
  const float *local = x->aligned + x->offset;
  if (!isContiguous(x)) {
    packed = DeviceBuffer(B * Sr * d, call);
    pack(x, packed.data(), call);
    local = packed.data();
  }
  std::vector<int64_t> counts(l.size);
  for (int r = 0; r < l.size; ++r)
    counts[r] = l.rows[r] * d;
  for (int64_t b = 0; b < B; ++b)
    comm([&] {
      mgrt_comm_all_gather(group, local + b * Sr * d, Sr * d,
                           full + b * l.total * d, counts.data(), MGRT_F32);
    });
}

/// Sums the [B,S,d] partial gradients `full` over the group into this
/// rank's rows x [B,S_r,d].
void scatterKeys(mgrt_comm_group *group, const Layout &l, const float *full,
                 mgrt_memref_f32_3 *x, const char *call) {
  const int64_t B = x->sizes[0], Sr = x->sizes[1], d = x->sizes[2];
  DeviceBuffer packed;
  float *local = x->aligned + x->offset;
  const bool direct = isContiguous(x);
  if (!direct) {
    packed = DeviceBuffer(B * Sr * d, call);
    local = packed.data();
  }
  std::vector<int64_t> counts(l.size);
  for (int r = 0; r < l.size; ++r)
    counts[r] = l.rows[r] * d;
  for (int64_t b = 0; b < B; ++b)
    comm([&] {
      mgrt_comm_reduce_scatter(group, full + b * l.total * d,
                               local + b * Sr * d, Sr * d, counts.data(),
                               MGRT_F32, MGRT_COMM_SUM);
    });
  if (!direct)
    unpack(local, x, call);
}

void allGatherForward(mgrt_comm_group *group, const Layout &l,
                      mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q,
                      mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                      mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                      int64_t numHeads, float scale, int64_t flags) {
  const int64_t B = q->sizes[0], S = l.total, D = k->sizes[2], Dv = v->sizes[2];
  DeviceBuffer kf(B * S * D, kFwd), vf(B * S * Dv, kFwd);
  gatherKeys(group, l, k, kf.data(), kFwd);
  gatherKeys(group, l, v, vf.data(), kFwd);
  mgrt_memref_f32_3 kd = desc3(kf.data(), B, S, D),
                    vd = desc3(vf.data(), B, S, Dv);
  if (S > 0)
    _mlir_ciface_mgrt_cuda_attention_f32(out, q, &kd, &vd, bias, mask, numHeads,
                                         scale, flags);
}

void allGatherBackward(mgrt_comm_group *group, const Layout &l,
                       mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk,
                       mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
                       mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
                       mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                       mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
                       int64_t numHeads, float scale, int64_t flags) {
  const int64_t B = q->sizes[0], S = l.total, D = k->sizes[2], Dv = v->sizes[2];
  DeviceBuffer kf(B * S * D, kBwd), vf(B * S * Dv, kBwd);
  gatherKeys(group, l, k, kf.data(), kBwd);
  gatherKeys(group, l, v, vf.data(), kBwd);
  // dK, dV of all S keys from the local queries: partial sums.
  DeviceBuffer dkf(B * S * D, kBwd), dvf(B * S * Dv, kBwd);
  mgrt_memref_f32_3 kd = desc3(kf.data(), B, S, D),
                    vd = desc3(vf.data(), B, S, Dv),
                    dkd = desc3(dkf.data(), B, S, D),
                    dvd = desc3(dvf.data(), B, S, Dv);
  if (S > 0)
    _mlir_ciface_mgrt_cuda_attention_bwd_f32(dq, &dkd, &dvd, dbias, dout, q,
                                             &kd, &vd, bias, mask, numHeads,
                                             scale, flags);
  kf.reset(), vf.reset();
  scatterKeys(group, l, dkf.data(), dk, kBwd);
  scatterKeys(group, l, dvf.data(), dv, kBwd);
}

//===-- Ring --------------------------------------------------------------===//

/// The attention problem of the local queries (contiguous qc [B,S_r,D])
/// against a block [K (B n D) | V (B n Dv)] at `blk`, the key columns
/// [j0, j0 + n) of bias and mask.
mgrt_cuda_attention blockProblem(const mgrt_memref_f32_3 *qc, float *blk,
                                 int64_t n, int64_t j0, int64_t D, int64_t Dv,
                                 mgrt_memref_f32_4 *bias,
                                 mgrt_memref_i8_4 *mask, int64_t H, float scale,
                                 int64_t flags, const char *call) {
  const int64_t B = qc->sizes[0];
  mgrt_memref_f32_3 kb = desc3(blk, B, n, D),
                    vb = desc3(blk + B * n * D, B, n, Dv);
  mgrt_memref_f32_4 bs{};
  mgrt_memref_i8_4 ms{};
  if (flags & MGRT_ATTENTION_BIAS)
    bs = keySlice(bias, j0, n);
  if (flags & MGRT_ATTENTION_MASK)
    ms = keySlice(mask, j0, n);
  return attentionOf(qc, &kb, &vb, &bs, &ms, H, scale, flags, call);
}

/// The forward ring: out (through its strides) and the row log-sum-exps
/// lse [B,H,S_r] of the local queries qc (contiguous) over all keys.
void ringForward(mgrt_comm_group *group, const Layout &l,
                 mgrt_memref_f32_3 *out, const mgrt_memref_f32_3 *qc,
                 const mgrt_memref_f32_3 *k, const mgrt_memref_f32_3 *v,
                 mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask, int64_t H,
                 float scale, int64_t flags, float *lse, const char *call) {
  const int64_t B = qc->sizes[0], Sr = qc->sizes[1], D = k->sizes[2],
                Dv = v->sizes[2];
  const int C = l.size, r = l.rank, next = (r + 1) % C, prev = (r + C - 1) % C;
  // 1. Two block buffers [K | V]; the local block first.
  const size_t blockFloats = B * l.maxRows * (D + Dv);
  DeviceBuffer cur(blockFloats, call), nxt(C > 1 ? blockFloats : 0, call);
  pack(k, cur.data(), call);
  pack(v, cur.data() + B * Sr * D, call);
  DeviceBuffer oT(B * Sr * Dv, call), lseT(B * H * Sr, call);
  const float inf = INFINITY;
  fill(lse, B * H * Sr, inf, call);
  zero3(out, call); // a row that keeps no key stays zero
  // 2. C steps: attend to the held block, then pass it on.
  for (int t = 0; t < C; ++t) {
    const int src = (r - t + 2 * C) % C;
    const int64_t n = l.rows[src];
    if (n > 0 && Sr > 0) {
      mgrt_cuda_attention a =
          blockProblem(qc, cur.data(), n, l.first[src], D, Dv, bias, mask, H,
                       scale, flags, call);
      a.out = oT.data();
      a.out_stride[0] = Sr * Dv, a.out_stride[1] = Dv;
      a.lse = lseT.data();
      mgrt_cuda_attention_forward(&a, nullptr);
      const int64_t n3 = B * Sr * Dv;
      mergeOutKernel<<<gridFor(n3), 256>>>(out->aligned + out->offset,
                                           viewOf(out), oT.data(), lse,
                                           lseT.data(), B, Sr, Dv, H);
      MGRT_CUDA_LAUNCHED(call);
      mergeLseKernel<<<gridFor(B * H * Sr), 256>>>(lse, lseT.data(),
                                                   B * H * Sr);
      MGRT_CUDA_LAUNCHED(call);
    }
    if (t + 1 == C)
      break;
    const int64_t nNext = l.rows[(r - t - 1 + 2 * C) % C];
    comm([&] {
      mgrt_comm_sendrecv(group, cur.data(), B * n * (D + Dv), next, nxt.data(),
                         B * nNext * (D + Dv), prev, MGRT_F32, 0);
    });
    std::swap(cur, nxt);
  }
}

void ringBackward(mgrt_comm_group *group, const Layout &l,
                  mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk,
                  mgrt_memref_f32_3 *dv, mgrt_memref_f32_4 *dbias,
                  mgrt_memref_f32_3 *dout, const mgrt_memref_f32_3 *qc,
                  mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v,
                  mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask, int64_t H,
                  float scale, int64_t flags) {
  const char *call = kBwd;
  const int64_t B = qc->sizes[0], Sr = qc->sizes[1], D = k->sizes[2],
                Dv = v->sizes[2];
  const int C = l.size, r = l.rank, next = (r + 1) % C, prev = (r + C - 1) % C;
  const bool wantDBias = (flags & MGRT_ATTENTION_DBIAS) && dbias;
  // 1. The full output and row statistics (the backward kernel reads both;
  //    it computes rowsum(dO * O) itself), dO contiguous like O.
  DeviceBuffer o(B * Sr * Dv, call), lse(B * H * Sr, call),
      doutc(B * Sr * Dv, call);
  mgrt_memref_f32_3 od = desc3(o.data(), B, Sr, Dv);
  ringForward(group, l, &od, qc, k, v, bias, mask, H, scale,
              flags & ~int64_t(MGRT_ATTENTION_DBIAS), lse.data(), call);
  pack(dout, doutc.data(), call);

  // 2. Two block buffers [K | V | dK | dV]; the local block with a zero
  //    accumulator first. dQ and dbias accumulate over the steps.
  const size_t blockFloats = 2 * B * l.maxRows * (D + Dv);
  DeviceBuffer cur(blockFloats, call), nxt(C > 1 ? blockFloats : 0, call);
  pack(k, cur.data(), call);
  pack(v, cur.data() + B * Sr * D, call);
  fill(cur.data() + B * Sr * (D + Dv), B * Sr * (D + Dv), 0.f, call);
  DeviceBuffer dqAcc(B * Sr * D, call), dqT(B * Sr * D, call),
      dkvT(B * l.maxRows * (D + Dv), call);
  fill(dqAcc.data(), B * Sr * D, 0.f, call);
  if (wantDBias) {
    View4 whole = view4Of(dbias);
    if (numel(whole) > 0) {
      zero4Kernel<<<gridFor(numel(whole)), 256>>>(
          dbias->aligned + dbias->offset, whole);
      MGRT_CUDA_LAUNCHED(call);
    }
  }

  // 3. C steps; K / V move after a step's attention, then dK / dV.
  for (int t = 0; t < C; ++t) {
    const int src = (r - t + 2 * C) % C;
    const int64_t n = l.rows[src], half = B * n * (D + Dv);
    if (n > 0 && Sr > 0) {
      mgrt_cuda_attention a =
          blockProblem(qc, cur.data(), n, l.first[src], D, Dv, bias, mask, H,
                       scale, flags, call);
      a.out = o.data();
      a.out_stride[0] = Sr * Dv, a.out_stride[1] = Dv;
      a.lse = lse.data();
      // This block's dbias columns, in a contiguous buffer of their own
      // (the kernel overwrites, and sums over broadcast dimensions).
      mgrt_memref_f32_4 dbs{};
      DeviceBuffer dbT;
      mgrt_cuda_attention_grad g;
      std::memset(&g, 0, sizeof(g));
      g.dout = doutc.data();
      g.dq = dqT.data();
      g.dk = dkvT.data();
      g.dv = dkvT.data() + B * n * D;
      if (wantDBias) {
        dbs = keySlice(dbias, l.first[src], n);
        View4 slice = view4Of(&dbs);
        dbT = DeviceBuffer(numel(slice), call);
        mgrt_memref_f32_4 packed{};
        int64_t stride = 1;
        for (int d = 3; d >= 0; --d) {
          packed.sizes[d] = slice.n[d];
          packed.strides[d] = stride;
          stride *= slice.n[d];
        }
        g.dbias = dbT.data();
        broadcastStrides(&packed, g.dbias_stride);
      }
      mgrt_cuda_attention_backward(&a, &g, nullptr);
      addInto(dqAcc.data(), dqT.data(), B * Sr * D, call);
      addInto(cur.data() + half, dkvT.data(), half, call);
      if (wantDBias && numel(view4Of(&dbs)) > 0) {
        add4Kernel<<<gridFor(numel(view4Of(&dbs))), 256>>>(
            dbs.aligned + dbs.offset, view4Of(&dbs), dbT.data());
        MGRT_CUDA_LAUNCHED(call);
      }
    }
    if (C == 1)
      break;
    // The block after this one: the next step's, or (after the last step)
    // this rank's own, coming home with its accumulator.
    const int64_t nNext = l.rows[(r - t - 1 + 2 * C) % C],
                  halfNext = B * nNext * (D + Dv);
    comm([&] {
      if (t + 1 < C)
        mgrt_comm_sendrecv(group, cur.data(), half, next, nxt.data(), halfNext,
                           prev, MGRT_F32, 0);
      mgrt_comm_sendrecv(group, cur.data() + half, half, next,
                         nxt.data() + halfNext, halfNext, prev, MGRT_F32, 0);
    });
    std::swap(cur, nxt);
  }

  // 4. The local block's accumulators are home.
  const int64_t half = B * Sr * (D + Dv);
  unpack(cur.data() + half, dk, call);
  unpack(cur.data() + half + B * Sr * D, dv, call);
  unpack(dqAcc.data(), dq, call);
}

/// q as a contiguous [B,S_r,D] descriptor (q itself, or a packed copy in
/// `storage`).
mgrt_memref_f32_3 contiguousQ(const mgrt_memref_f32_3 *q, DeviceBuffer &storage,
                              const char *call) {
  if (isContiguous(q) && q->strides[2] == 1)
    return *q;
  storage = DeviceBuffer(q->sizes[0] * q->sizes[1] * q->sizes[2], call);
  pack(q, storage.data(), call);
  return desc3(storage.data(), q->sizes[0], q->sizes[1], q->sizes[2]);
}

/// Uneven blocks (cp does not divide S: `seq` is S, the blocks padded) are
/// implemented by the host kernels only; ends the job naming the call.
void refuseUneven(const char *call, int64_t seq) {
  if (seq == 0)
    return;
  const std::string msg =
      std::string(call) +
      ": context-parallel blocks of unequal size (S = " + std::to_string(seq) +
      " not divisible by cp) are not implemented on --target cuda; choose a "
      "cp that divides S";
  mgrt_comm_abort(msg.c_str(), 3);
}

} // namespace

extern "C" void _mlir_ciface_mgrt_cuda_cp_attention_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t numHeads, float scale, int64_t flags, int64_t g0, int64_t g1,
    int64_t g2, int64_t g3, int64_t axes, int64_t mode, int64_t seq) {
  refuseUneven(kFwd, seq);
  const Groups groups = groupsOf({{g0, g1, g2, g3}, axes}, kFwd);
  const Layout l = layoutOf(groups.host, q->sizes[1]);
  check(kFwd, mode, q, k, v, bias, mask, nullptr, numHeads, flags, l);
  if (mode == MGRT_CP_ALLGATHER) {
    allGatherForward(groups.device, l, out, q, k, v, bias, mask, numHeads,
                     scale, flags);
    return;
  }
  DeviceBuffer qStorage, lse(q->sizes[0] * numHeads * q->sizes[1], kFwd);
  const mgrt_memref_f32_3 qc = contiguousQ(q, qStorage, kFwd);
  ringForward(groups.device, l, out, &qc, k, v, bias, mask, numHeads, scale,
              flags, lse.data(), kFwd);
}

extern "C" void _mlir_ciface_mgrt_cuda_cp_attention_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags,
    int64_t g0, int64_t g1, int64_t g2, int64_t g3, int64_t axes, int64_t mode,
    int64_t seq) {
  refuseUneven(kBwd, seq);
  const Groups groups = groupsOf({{g0, g1, g2, g3}, axes}, kBwd);
  const Layout l = layoutOf(groups.host, q->sizes[1]);
  check(kBwd, mode, q, k, v, bias, mask, dbias, numHeads, flags, l);
  if (mode == MGRT_CP_ALLGATHER) {
    allGatherBackward(groups.device, l, dq, dk, dv, dbias, dout, q, k, v, bias,
                      mask, numHeads, scale, flags);
    return;
  }
  DeviceBuffer qStorage;
  const mgrt_memref_f32_3 qc = contiguousQ(q, qStorage, kBwd);
  ringBackward(groups.device, l, dq, dk, dv, dbias, dout, &qc, k, v, bias, mask,
               numHeads, scale, flags);
}
