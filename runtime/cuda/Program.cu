//===- Program.cu - What a --target cuda executable calls ----------------===//
//
// The host side of a compiled CUDA program:
//  * the `mgpu*` launch interface that MLIR's gpu-to-llvm lowering and the
//    gpu.binary translation call: modules are PTX, JIT-compiled by the
//    driver for the GPU at hand on first use (so a program starts, and says
//    what is wrong, on a machine without a GPU); kernels go to the default
//    stream, in order with cuBLAS and the attention kernels;
//  * device buffers for the step (mgrt_cuda_memref_alloc/free) and device
//    copies of its globals (mgrt_cuda_global);
//  * mgrt_cuda_run_entry: the driver's host tensors in, results out.
// The CUDA driver API is loaded with dlopen, so nothing here needs
// libcuda.so to link.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.cuh"
#include "driver/Descriptor.h"
#include "support/LocalRank.h"

#include "megagraph/Runtime.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using mgrt::kernelFail;

/// The few driver API entry points a program needs, from libcuda.so.1.
struct Driver {
  CUresult (*moduleLoadDataEx)(CUmodule *, const void *, unsigned,
                               CUjit_option *, void **) = nullptr;
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *) = nullptr;
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **) = nullptr;
  CUresult (*getErrorString)(CUresult, const char **) = nullptr;

  const char *error(CUresult r) const {
    const char *s = nullptr;
    if (getErrorString)
      getErrorString(r, &s);
    return s ? s : "unknown CUDA driver error";
  }
};

/// The CUDA device of this process (set once by requireDevice).
int programDevice = 0;

/// Ends the program with a clear message when there is no usable GPU;
/// makes this process's device current.
void requireDevice() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (mgrt_cuda_device_count() <= 0) {
      std::fprintf(stderr,
                   "megagraph: this program was compiled with --target cuda "
                   "but no CUDA device is usable here (no GPU, no driver, or "
                   "CUDA_VISIBLE_DEVICES hides them); compile with --target "
                   "cpu to run on this machine\n");
      // Without atexit handlers: the communication runtime's would tell
      // the other ranks of a job that this one finished normally, and a
      // rank waiting for it would wait for the comm timeout; this way its
      // connections close and they stop at once, naming it.
      std::fflush(nullptr);
      std::_Exit(1);
    }
    // One process per GPU: the device of this node-local rank (or
    // MEGAGRAPH_CUDA_DEVICE), chosen before any CUDA work. The NCCL groups
    // of multi-GPU programs bind to it too.
    std::string why;
    const int device = mgrt::chooseCudaDevice(
        mgrt_cuda_device_count(), [](const char *n) { return std::getenv(n); },
        why);
    if (device < 0) {
      std::fprintf(stderr, "megagraph: %s\n", why.c_str());
      std::fflush(nullptr);
      std::_Exit(1);
    }
    programDevice = device;
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
      kernelFail("cuda", "cannot use CUDA device %d: %s", device,
                 cudaGetErrorString(e));
    // The runtime API's primary context, current on this thread, is the
    // one the driver API calls below use.
    e = cudaFree(nullptr);
    if (e != cudaSuccess)
      kernelFail("cuda", "cannot create a CUDA context: %s",
                 cudaGetErrorString(e));
  });
}

/// The primary context is current on the thread that made the first
/// runtime API call; the driver API calls below need it on every thread
/// that launches.
void bindContext() {
  thread_local bool bound = false;
  if (!bound) {
    requireDevice();
    (void)cudaSetDevice(programDevice);
    (void)cudaFree(nullptr);
    bound = true;
  }
}

const Driver &driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    requireDevice();
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
      kernelFail("cuda", "cannot load the CUDA driver library libcuda.so.1: %s",
                 dlerror());
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      if (!fn)
        kernelFail("cuda", "the CUDA driver has no %s", name);
    };
    get(d.moduleLoadDataEx, "cuModuleLoadDataEx");
    get(d.moduleGetFunction, "cuModuleGetFunction");
    get(d.launchKernel, "cuLaunchKernel");
    get(d.getErrorString, "cuGetErrorString");
  });
  return d;
}

/// A kernel module as the program's constructors register it; loaded (and
/// its PTX JIT-compiled) on the first launch.
struct Module {
  const void *image = nullptr;
  int optLevel = 3;
  std::mutex lock;
  CUmodule module = nullptr;
  std::unordered_map<const char *, CUfunction> functions;
};

CUfunction functionOf(Module *m, const char *name) {
  std::lock_guard<std::mutex> guard(m->lock);
  auto it = m->functions.find(name);
  if (it != m->functions.end())
    return it->second;
  bindContext();
  const Driver &d = driver();
  if (!m->module) {
    char log[8192] = "";
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                      reinterpret_cast<void *>(static_cast<intptr_t>(
                          m->optLevel < 0   ? 0
                          : m->optLevel > 4 ? 4
                                            : m->optLevel))};
    CUresult r = d.moduleLoadDataEx(&m->module, m->image, 3, options, values);
    if (r != CUDA_SUCCESS)
      kernelFail("cuda", "loading the program's kernels failed: %s%s%s",
                 d.error(r), log[0] ? "\n" : "", log);
  }
  CUfunction f = nullptr;
  CUresult r = d.moduleGetFunction(&f, m->module, name);
  if (r != CUDA_SUCCESS)
    kernelFail("cuda", "no kernel %s in the program: %s", name, d.error(r));
  m->functions.emplace(name, f);
  return f;
}

bool syncEveryKernel() {
  static const bool sync = [] {
    const char *v = std::getenv("MEGAGRAPH_CUDA_SYNC");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return sync;
}

struct Globals {
  std::mutex lock;
  std::unordered_map<const void *, void *> device;
};
Globals &globals() {
  static Globals g;
  return g;
}

} // namespace

//===-- MLIR's GPU launch interface ---------------------------------------===//

extern "C" void *mgpuModuleLoadJIT(void *data, int optLevel) {
  auto *m = new Module;
  m->image = data;
  m->optLevel = optLevel;
  return m;
}

/// Modules live as long as the process (the context is gone by the time
/// the program's destructors run).
extern "C" void mgpuModuleUnload(void * /*module*/) {}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  return functionOf(static_cast<Module *>(module), name);
}

extern "C" void *mgpuStreamCreate() { return nullptr; }
extern "C" void mgpuStreamDestroy(void * /*stream*/) {}
extern "C" void mgpuStreamSynchronize(void * /*stream*/) {
  // Kernels, cuBLAS and the attention kernels share the default stream, so
  // they run in program order; results reach the host through synchronous
  // copies. MEGAGRAPH_CUDA_SYNC=1 waits here (and checks) after each kernel.
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t /*paramsCount*/) {
  // mgpuModuleGetFunction, called right before on this thread, bound the
  // context.
  const Driver &d = driver();
  CUresult r = d.launchKernel(
      static_cast<CUfunction>(function), (unsigned)gridX, (unsigned)gridY,
      (unsigned)gridZ, (unsigned)blockX, (unsigned)blockY, (unsigned)blockZ,
      (unsigned)smem, static_cast<CUstream>(stream), params, extra);
  if (r != CUDA_SUCCESS)
    kernelFail("cuda",
               "kernel launch (grid %ld x %ld x %ld, block %ld x %ld x %ld) "
               "failed: %s",
               (long)gridX, (long)gridY, (long)gridZ, (long)blockX,
               (long)blockY, (long)blockZ, d.error(r));
  if (syncEveryKernel()) {
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
      kernelFail("cuda", "kernel failed: %s", cudaGetErrorString(e));
  }
}

//===-- Device buffers and globals ----------------------------------------===//

extern "C" void *mgrt_cuda_memref_alloc(size_t bytes) {
  requireDevice();
  void *p = mgrt_cuda_alloc(bytes ? bytes : 1);
  if (!p)
    kernelFail("cuda",
               "out of device memory allocating %zu bytes (device peak so far "
               "%zu bytes)",
               bytes, mgrt_cuda_peak_bytes());
  return p;
}

extern "C" void *mgrt_cuda_memref_aligned_alloc(size_t /*alignment*/,
                                                size_t bytes) {
  // cudaMalloc returns 256-byte aligned memory.
  return mgrt_cuda_memref_alloc(bytes);
}

extern "C" void mgrt_cuda_memref_free(void *p) { mgrt_cuda_free(p); }

extern "C" void *mgrt_cuda_global(const void *host, int64_t bytes) {
  Globals &g = globals();
  std::lock_guard<std::mutex> guard(g.lock);
  auto it = g.device.find(host);
  if (it != g.device.end())
    return it->second;
  void *d = mgrt_cuda_memref_alloc(static_cast<size_t>(bytes));
  mgrt_cuda_copy_to_device(d, host, static_cast<size_t>(bytes));
  g.device.emplace(host, d);
  return d;
}

//===-- Host reads of device scalars --------------------------------------===//

namespace {
template <typename T> T loadScalar(const mgrt_cuda_scalar_ref *m) {
  T value{};
  const char *p = static_cast<const char *>(m->aligned) + m->offset * sizeof(T);
  mgrt_cuda_copy_to_host(&value, p, sizeof(T));
  return value;
}
} // namespace

extern "C" int32_t
_mlir_ciface_mgrt_cuda_load_i32(const mgrt_cuda_scalar_ref *m) {
  return loadScalar<int32_t>(m);
}
extern "C" int64_t
_mlir_ciface_mgrt_cuda_load_i64(const mgrt_cuda_scalar_ref *m) {
  return loadScalar<int64_t>(m);
}
extern "C" float
_mlir_ciface_mgrt_cuda_load_f32(const mgrt_cuda_scalar_ref *m) {
  return loadScalar<float>(m);
}
extern "C" double
_mlir_ciface_mgrt_cuda_load_f64(const mgrt_cuda_scalar_ref *m) {
  return loadScalar<double>(m);
}

//===-- Entry points ------------------------------------------------------===//

namespace {
/// Device buffers of one entry's inputs and outputs, kept across calls.
struct EntryBuffers {
  std::vector<void *> data;
  std::vector<std::vector<int64_t>> descriptors;
};
} // namespace

extern "C" void mgrt_cuda_run_entry(void (*fn)(void **), void **hostDescs,
                                    int numInputs,
                                    const mgrt_tensor_info *inputs,
                                    int numOutputs,
                                    const mgrt_tensor_info *outputs) {
  requireDevice();
  static std::mutex lock;
  static std::map<void (*)(void **), EntryBuffers> cache;
  std::lock_guard<std::mutex> guard(lock);
  const int n = numInputs + numOutputs;
  EntryBuffers &buffers = cache[fn];
  auto infoOf = [&](int i) -> const mgrt_tensor_info & {
    return i < numInputs ? inputs[i] : outputs[i - numInputs];
  };
  auto bytesOf = [&](int i) {
    const mgrt_tensor_info &t = infoOf(i);
    size_t bytes = mgrt_dtype_size(t.dtype);
    for (int d = 0; d < t.rank; ++d)
      bytes *= static_cast<size_t>(t.shape[d]);
    return bytes;
  };
  if (buffers.data.empty()) {
    buffers.data.resize(n);
    buffers.descriptors.resize(n);
    for (int i = 0; i < n; ++i) {
      const mgrt_tensor_info &t = infoOf(i);
      buffers.data[i] = mgrt_cuda_memref_alloc(bytesOf(i));
      buffers.descriptors[i] =
          mgrt::rowMajorDescriptor(buffers.data[i], t.rank, t.shape);
    }
  }
  // Host descriptors: the driver's row-major tensors.
  auto hostData = [&](int i) {
    const int64_t *desc = static_cast<const int64_t *>(hostDescs[i]);
    char *aligned;
    std::memcpy(&aligned, &desc[1], sizeof(void *));
    return aligned + desc[2] * mgrt_dtype_size(infoOf(i).dtype);
  };
  for (int i = 0; i < numInputs; ++i)
    mgrt_cuda_copy_to_device(buffers.data[i], hostData(i), bytesOf(i));
  std::vector<void *> deviceDescs(n);
  for (int i = 0; i < n; ++i)
    deviceDescs[i] = buffers.descriptors[i].data();
  fn(deviceDescs.data());
  for (int i = numInputs; i < n; ++i)
    mgrt_cuda_copy_to_host(hostData(i), buffers.data[i], bytesOf(i));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    kernelFail("cuda", "the step failed on the GPU: %s", cudaGetErrorString(e));
}
