//===- Roles.h - Binding a model's tensors by role --------------*- C++ -*-===//
//
// Internal to the runtime. The role of an entry of a model's tensor table
// (megagraph/ModelABI.h): the one the compiler wrote, or for a table that
// leaves it 0 (written by hand), the role its name has by the conventions.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_ROLES_H
#define MEGAGRAPH_RUNTIME_DRIVER_ROLES_H

#include "megagraph/Runtime.h"

namespace mgrt {

/// The role of `t`; `index` (may be null) receives its act/dact/saved index
/// or -1.
inline mgrt_tensor_role roleOf(const mgrt_tensor_info &t,
                               int *index = nullptr) {
  if (t.role == MGRT_ROLE_UNSPECIFIED)
    return mgrt_role_of_name(t.name, index);
  if (index)
    *index = t.index;
  return static_cast<mgrt_tensor_role>(t.role);
}

/// Index of the first of the `n` tensors of `infos` with role `role`, or -1.
inline int findRole(const mgrt_tensor_info *infos, int n,
                    mgrt_tensor_role role) {
  for (int i = 0; i < n; ++i)
    if (roleOf(infos[i]) == role)
      return i;
  return -1;
}

/// The number of classes the labels input `t` indexes (its `index` in a
/// table the compiler wrote), or -1 when unknown (float targets, a table
/// without roles).
inline int64_t numClassesOf(const mgrt_tensor_info &t) {
  if (t.role != MGRT_ROLE_LABELS || t.index < 1 ||
      (t.dtype != MGRT_I64 && t.dtype != MGRT_I32))
    return -1;
  return t.index;
}

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_ROLES_H
