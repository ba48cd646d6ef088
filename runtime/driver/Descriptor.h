//===- Descriptor.h - Memref descriptors of host tensors --------*- C++ -*-===//
//
// Internal to the runtime. A compiled entry receives one memref descriptor
// per tensor (MLIR's C interface): for rank r, 3 + 2r int64 words,
// allocated, aligned, offset, sizes[r], strides[r]. The driver's tensors
// are row-major.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_DESCRIPTOR_H
#define MEGAGRAPH_RUNTIME_DRIVER_DESCRIPTOR_H

#include "megagraph/Runtime.h"

#include <cstdint>
#include <vector>

namespace mgrt {

/// The descriptor of row-major `data` of `shape` (rank `rank`).
inline std::vector<int64_t> rowMajorDescriptor(void *data, int rank,
                                               const int64_t *shape) {
  std::vector<int64_t> d(3 + 2 * rank);
  d[0] = d[1] = static_cast<int64_t>(reinterpret_cast<intptr_t>(data));
  d[2] = 0;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    d[3 + i] = shape[i];
    d[3 + rank + i] = stride;
    stride *= shape[i];
  }
  return d;
}

/// The descriptor of `t`.
inline std::vector<int64_t> descriptorOf(const mgrt_tensor &t) {
  return rowMajorDescriptor(t.data, t.rank, t.shape);
}

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_DESCRIPTOR_H
