//===- Error.h - How the runtime reports errors -----------------*- C++ -*-===//
//
// Internal to the runtime. Every error of the runtime goes through one of
// these helpers, one per channel:
//  * the C API's caller buffer (`char *err, size_t errlen` + a status code):
//    errorInto;
//  * a kernel's broken contract or a device error, which compiled code
//    cannot handle: kernelFail prints "megagraph runtime: KERNEL: MESSAGE"
//    and aborts;
//  * the driver's messages to the user: reportError prints "error: MESSAGE"
//    and returns the exit code; setError hands a message to the caller.
// formatMessage is the printf-style formatting they share (the
// communication runtime records its messages with it, comm/Comm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_SUPPORT_ERROR_H
#define MEGAGRAPH_RUNTIME_SUPPORT_ERROR_H

#include <cstdarg>
#include <cstddef>
#include <string>

namespace mgrt {

/// vsnprintf into a std::string (any length).
std::string formatMessage(const char *fmt, va_list args);

/// Writes the message into err (if err is non-null and errlen > 0,
/// truncated to errlen - 1 characters) and returns `code`.
int errorInto(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/// Prints "megagraph runtime: KERNEL: MESSAGE" to stderr and aborts.
[[noreturn]] void kernelFail(const char *kernel, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// Prints "error: MESSAGE" to stderr and returns `code` (an exit code).
int reportError(const std::string &message, int code = 1);

/// Stores `message` in `error` and returns false.
inline bool setError(std::string &error, std::string message) {
  error = std::move(message);
  return false;
}

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_SUPPORT_ERROR_H
