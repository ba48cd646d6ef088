//===- MemrefCopy.cpp - MLIR's strided memref copy ------------------------===//
//
// `memref.copy` between buffers that are not both contiguous lowers to a call
// of `memrefCopy` (the MLIR C runner-utils ABI: element size and two unranked
// descriptors). Compiled models need it for concatenation along an inner
// axis and for copies out of column slices, so the runtime provides it:
// contiguous innermost runs are copied with memcpy, the rest row by row.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Runtime.h"

#include <cstring>

namespace {

/// MLIR's unranked memref: the rank and a pointer to a ranked descriptor
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

struct View {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
};

View viewOf(const UnrankedMemRef *m) {
  auto *words = static_cast<int64_t *>(m->descriptor);
  auto **ptrs = static_cast<char **>(m->descriptor);
  return {ptrs[1], words[2], words + 3, words + 3 + m->rank};
}

} // namespace

extern "C" void memrefCopy(int64_t elemSize, UnrankedMemRef *src,
                           UnrankedMemRef *dst) {
  const int64_t rank = src->rank;
  View s = viewOf(src), d = viewOf(dst);
  int64_t total = 1;
  for (int64_t i = 0; i < rank; ++i)
    total *= s.sizes[i];
  if (total == 0)
    return;
  if (rank == 0) {
    std::memcpy(d.aligned + d.offset * elemSize,
                s.aligned + s.offset * elemSize, elemSize);
    return;
  }
  // Copy the innermost dimension as one run when both sides are unit-stride.
  const int64_t inner = s.sizes[rank - 1];
  const bool contiguousRows =
      s.strides[rank - 1] == 1 && d.strides[rank - 1] == 1;
  int64_t index[MGRT_MAX_RANK > 16 ? MGRT_MAX_RANK : 16] = {0};
  for (int64_t row = 0, rows = total / inner; row < rows; ++row) {
    int64_t so = s.offset, dOff = d.offset;
    for (int64_t i = 0; i + 1 < rank; ++i) {
      so += index[i] * s.strides[i];
      dOff += index[i] * d.strides[i];
    }
    if (contiguousRows) {
      std::memcpy(d.aligned + dOff * elemSize, s.aligned + so * elemSize,
                  inner * elemSize);
    } else {
      for (int64_t j = 0; j < inner; ++j)
        std::memcpy(d.aligned + (dOff + j * d.strides[rank - 1]) * elemSize,
                    s.aligned + (so + j * s.strides[rank - 1]) * elemSize,
                    elemSize);
    }
    for (int64_t i = rank - 2; i >= 0; --i) {
      if (++index[i] < s.sizes[i])
        break;
      index[i] = 0;
    }
  }
}
