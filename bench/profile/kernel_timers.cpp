//===- kernel_timers.cpp - Where a compiled model spends its time ---------===//
//
// Linked into a compiled model by bench/profile_compiled.sh with
// -Wl,--wrap=SYM for the runtime entry points the generated code calls: each
// call is timed, and at exit one line per entry point goes to stderr (ms and
// calls per forward); "generated" = the model's time minus all of them, i.e.
// the loops MLIR generated. With PROF_SAMPLE=FILE it also samples the
// program counter every 200 us (a CLOCK_MONOTONIC timer + SIGPROF) and
// writes the samples, the load address and /proc/self/maps to FILE for
// bench/profile/attribute_samples.py. Not part of any build: a profiling
// aid (perf is not available on the benchmark machine, and valgrind does not
// decode the AVX-512 code megagraph-compile emits for this host).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <ucontext.h>

extern "C" char __executable_start;

namespace {

struct Counter {
  const char *name;
  double ms = 0;
  long calls = 0;
};
enum { kAttention, kMatmul, kLayerNorm, kAlloc, kFree, kModel, kNum };
Counter counters[kNum] = {{"attention"}, {"matmul"}, {"layer_norm"},
                          {"alloc"},     {"free"},   {"model(total)"}};

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Scope {
  Counter &c;
  double t0;
  explicit Scope(Counter &c) : c(c), t0(nowMs()) {}
  ~Scope() {
    c.ms += nowMs() - t0;
    c.calls++;
  }
};

struct Report {
  ~Report() {
    const long runs = counters[kModel].calls ? counters[kModel].calls : 1;
    double rest = counters[kModel].ms;
    for (int i = 0; i < kModel; ++i)
      rest -= counters[i].ms;
    for (const Counter &c : counters)
      std::fprintf(stderr, "PROF %-13s %9.2f ms/forward %6ld calls/forward\n",
                   c.name, c.ms / runs, c.calls / runs);
    std::fprintf(stderr, "PROF %-13s %9.2f ms/forward\n", "generated",
                 rest / runs);
  }
} report;

// ---- program-counter sampler ----
constexpr long kMaxSamples = 1 << 22;
uintptr_t *samples;
std::atomic<long> numSamples{0};

void onSample(int, siginfo_t *, void *ctx) {
  long i = numSamples.fetch_add(1, std::memory_order_relaxed);
  if (i < kMaxSamples)
    samples[i] = static_cast<uintptr_t>(
        static_cast<ucontext_t *>(ctx)->uc_mcontext.gregs[REG_RIP]);
}

struct Sampler {
  const char *out = std::getenv("PROF_SAMPLE");
  timer_t timer{};
  Sampler() {
    if (!out)
      return;
    samples =
        static_cast<uintptr_t *>(std::malloc(kMaxSamples * sizeof(uintptr_t)));
    struct sigaction sa = {};
    sa.sa_sigaction = onSample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, nullptr);
    sigevent sev = {};
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGPROF;
    timer_create(CLOCK_MONOTONIC, &sev, &timer);
    itimerspec period = {{0, 200000}, {0, 200000}};
    timer_settime(timer, 0, &period, nullptr);
  }
  ~Sampler() {
    if (!out)
      return;
    timer_delete(timer);
    FILE *f = std::fopen(out, "w");
    if (!f)
      return;
    std::fprintf(f, "base %lx\n",
                 static_cast<unsigned long>(
                     reinterpret_cast<uintptr_t>(&__executable_start)));
    if (FILE *maps = std::fopen("/proc/self/maps", "r")) {
      char line[1024];
      while (std::fgets(line, sizeof line, maps))
        std::fprintf(f, "map %s", line);
      std::fclose(maps);
    }
    const long n =
        numSamples.load() < kMaxSamples ? numSamples.load() : kMaxSamples;
    for (long i = 0; i < n; ++i)
      std::fprintf(f, "%lx\n", static_cast<unsigned long>(samples[i]));
    std::fclose(f);
  }
} sampler;

} // namespace

extern "C" {
void __real__mlir_ciface_mgrt_attention_f32(
    mgrt_memref_f32_3 *, mgrt_memref_f32_3 *, mgrt_memref_f32_3 *,
    mgrt_memref_f32_3 *, mgrt_memref_f32_4 *, mgrt_memref_i8_4 *, int64_t,
    float, int64_t);
void __wrap__mlir_ciface_mgrt_attention_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t heads, float scale, int64_t flags) {
  Scope s(counters[kAttention]);
  __real__mlir_ciface_mgrt_attention_f32(out, q, k, v, bias, mask, heads, scale,
                                         flags);
}
void __real__mlir_ciface_mgrt_matmul_f32(mgrt_memref_f32_3 *,
                                         mgrt_memref_f32_3 *,
                                         mgrt_memref_f32_3 *);
void __wrap__mlir_ciface_mgrt_matmul_f32(mgrt_memref_f32_3 *out,
                                         mgrt_memref_f32_3 *a,
                                         mgrt_memref_f32_3 *b) {
  Scope s(counters[kMatmul]);
  __real__mlir_ciface_mgrt_matmul_f32(out, a, b);
}
void __real__mlir_ciface_mgrt_layer_norm_f32(mgrt_memref_f32_2 *,
                                             mgrt_memref_f32_2 *,
                                             mgrt_memref_f32_1 *,
                                             mgrt_memref_f32_1 *, float,
                                             int64_t);
void __wrap__mlir_ciface_mgrt_layer_norm_f32(mgrt_memref_f32_2 *out,
                                             mgrt_memref_f32_2 *x,
                                             mgrt_memref_f32_1 *gamma,
                                             mgrt_memref_f32_1 *beta, float eps,
                                             int64_t hasBeta) {
  Scope s(counters[kLayerNorm]);
  __real__mlir_ciface_mgrt_layer_norm_f32(out, x, gamma, beta, eps, hasBeta);
}
void *__real__mlir_memref_to_llvm_alloc(size_t);
void *__wrap__mlir_memref_to_llvm_alloc(size_t size) {
  Scope s(counters[kAlloc]);
  return __real__mlir_memref_to_llvm_alloc(size);
}
void *__real__mlir_memref_to_llvm_aligned_alloc(size_t, size_t);
void *__wrap__mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  Scope s(counters[kAlloc]);
  return __real__mlir_memref_to_llvm_aligned_alloc(alignment, size);
}
void __real__mlir_memref_to_llvm_free(void *);
void __wrap__mlir_memref_to_llvm_free(void *p) {
  Scope s(counters[kFree]);
  __real__mlir_memref_to_llvm_free(p);
}
// The model's C interface entry takes one descriptor pointer per tensor; six
// are enough for this benchmark's model (4 inputs + 1 output), extra
// arguments are passed through harmlessly by the x86-64 calling convention.
void __real__mlir_ciface_megagraph_model(void *, void *, void *, void *, void *,
                                         void *);
void __wrap__mlir_ciface_megagraph_model(void *a, void *b, void *c, void *d,
                                         void *e, void *f) {
  Scope s(counters[kModel]);
  __real__mlir_ciface_megagraph_model(a, b, c, d, e, f);
}
}
