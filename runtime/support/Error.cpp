//===- Error.cpp - How the runtime reports errors -------------------------===//

#include "support/Error.h"

#include <cstdio>
#include <cstdlib>

namespace mgrt {

std::string formatMessage(const char *fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0)
    return std::string();
  std::string s(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(&s[0], s.size(), fmt, args);
  s.resize(static_cast<size_t>(n));
  return s;
}

int errorInto(char *err, size_t errlen, int code, const char *fmt, ...) {
  if (err && errlen > 0) {
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(err, errlen, fmt, args);
    va_end(args);
  }
  return code;
}

void kernelFail(const char *kernel, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const std::string message = formatMessage(fmt, args);
  va_end(args);
  std::fprintf(stderr, "megagraph runtime: %s: %s\n", kernel, message.c_str());
  std::fflush(stderr);
  std::abort();
}

int reportError(const std::string &message, int code) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return code;
}

} // namespace mgrt
