//===- Check.cpp - Contract checks of the kernels -------------------------===//

#include "support/Check.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace mgrt {

void kernelFail(const char *kernel, const char *fmt, ...) {
  std::fprintf(stderr, "megagraph runtime: %s: ", kernel);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  std::abort();
}

} // namespace mgrt
