//===- megagraph-fuzz-npy.cpp - libFuzzer target over the .npy reader -----===//
//
// Part of MegaGraph. Feeds arbitrary bytes to mgrt_npy_read as the file a
// user passes with --input or --data npy: whatever the bytes, the reader
// must return a tensor or an error, never crash, overread or allocate more
// than the file holds. A tensor it returns must survive a write and a
// second read unchanged. The bytes go through an in-memory file
// (memfd_create), so no disk is touched. Built with -DMEGAGRAPH_FUZZ=ON and
// clang (README.md, "Fuzzing").
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace {

/// An in-memory file reachable by path (/proc/self/fd/N).
struct MemFile {
  int fd = -1;
  std::string path;
  explicit MemFile(const char *name) {
    fd = memfd_create(name, 0);
    if (fd < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  void assign(const uint8_t *data, size_t size) const {
    if (ftruncate(fd, 0) != 0 ||
        (size && pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))) {
      std::perror("memfd write");
      std::abort();
    }
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const MemFile in("fuzz-npy-in"), out("fuzz-npy-out");
  in.assign(data, size);
  char err[512];
  mgrt_tensor t;
  if (mgrt_npy_read(in.path.c_str(), &t, err, sizeof err) != MGRT_OK)
    return 0;
  // Round trip: what was read is written and read back bit for bit.
  out.assign(nullptr, 0);
  if (mgrt_npy_write(out.path.c_str(), &t, err, sizeof err) != MGRT_OK) {
    std::fprintf(stderr, "mgrt_npy_write failed on a tensor it read: %s\n",
                 err);
    std::abort();
  }
  mgrt_tensor u;
  if (mgrt_npy_read(out.path.c_str(), &u, err, sizeof err) != MGRT_OK) {
    std::fprintf(stderr, "the written file does not read back: %s\n", err);
    std::abort();
  }
  const size_t bytes =
      mgrt_dtype_size(t.dtype) * static_cast<size_t>(mgrt_tensor_numel(&t));
  bool same = u.dtype == t.dtype && u.rank == t.rank;
  for (int d = 0; same && d < t.rank; ++d)
    same = u.shape[d] == t.shape[d];
  if (!same || (bytes && std::memcmp(u.data, t.data, bytes) != 0)) {
    std::fprintf(stderr, "the round trip changed the tensor\n");
    std::abort();
  }
  mgrt_tensor_free(&u);
  mgrt_tensor_free(&t);
  return 0;
}
