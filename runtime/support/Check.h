//===- Check.h - Contract checks of the kernels -----------------*- C++ -*-===//
//
// Internal to the runtime. Kernel operands that break the kernel's contract
// (shapes, strides) can only come from a compiler bug, and the C interface
// has no error channel: report and abort.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_SUPPORT_CHECK_H
#define MEGAGRAPH_RUNTIME_SUPPORT_CHECK_H

namespace mgrt {

/// Prints "megagraph runtime: KERNEL: MESSAGE" to stderr and aborts.
[[noreturn]] void kernelFail(const char *kernel, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

} // namespace mgrt

#define MGRT_CHECK(cond, kernel, ...)                                          \
  do {                                                                         \
    if (!(cond))                                                               \
      ::mgrt::kernelFail(kernel, __VA_ARGS__);                                 \
  } while (0)

#endif // MEGAGRAPH_RUNTIME_SUPPORT_CHECK_H
