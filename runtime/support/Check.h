//===- Check.h - Contract checks of the kernels -----------------*- C++ -*-===//
//
// Internal to the runtime. Kernel operands that break the kernel's contract
// (shapes, strides) can only come from a compiler bug, and the C interface
// has no error channel: report and abort (kernelFail, support/Error.h).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_SUPPORT_CHECK_H
#define MEGAGRAPH_RUNTIME_SUPPORT_CHECK_H

#include "support/Error.h"

#define MGRT_CHECK(cond, kernel, ...)                                          \
  do {                                                                         \
    if (!(cond))                                                               \
      ::mgrt::kernelFail(kernel, __VA_ARGS__);                                 \
  } while (0)

#endif // MEGAGRAPH_RUNTIME_SUPPORT_CHECK_H
