//===- LocalRank.cpp - This process's rank on its node --------------------===//
//
// Part of MegaGraph's runtime. See LocalRank.h.
//
//===----------------------------------------------------------------------===//

#include "support/LocalRank.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace {

/// A decimal number >= 0 in `text`, or -1.
long parseIndex(const char *text) {
  if (!text || !*text)
    return -1;
  char *end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno || *end || v < 0)
    return -1;
  return v;
}

} // namespace

int mgrt::chooseCudaDevice(
    int count, const std::function<const char *(const char *)> &getenv,
    std::string &error) {
  if (const char *forced = getenv(kCudaDeviceEnv); forced && *forced) {
    const long d = parseIndex(forced);
    if (d < 0 || d >= count) {
      error = std::string(kCudaDeviceEnv) + "=" + forced +
              " is not a device number (this machine has " +
              std::to_string(count) + " device(s), 0 to " +
              std::to_string(count - 1) + ")";
      return -1;
    }
    return static_cast<int>(d);
  }
  for (const char *name : kLocalRankEnv)
    if (const long r = parseIndex(getenv(name)); r >= 0)
      return static_cast<int>(r % count);
  return 0;
}

int mgrt::chooseNumThreads(
    int cores, const std::function<const char *(const char *)> &getenv) {
  if (const long v = parseIndex(getenv(kNumThreadsEnv)); v > 0)
    return static_cast<int>(v > 1024 ? 1024 : v);
  return coresOfRank(cores, getenv);
}

int mgrt::coresOfRank(int cores,
                      const std::function<const char *(const char *)> &getenv) {
  long local = 1;
  for (const char *name : kLocalSizeEnv)
    if (const long n = parseIndex(getenv(name)); n > 0) {
      local = n;
      break;
    }
  return std::max(1, static_cast<int>(std::max(cores, 1) / local));
}
