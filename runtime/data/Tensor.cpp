//===- Tensor.cpp - Host tensors ------------------------------------------===//

#include "megagraph/Runtime.h"

#include <cstring>

extern "C" {

size_t mgrt_dtype_size(int dtype) {
  switch (dtype) {
  case MGRT_F32:
  case MGRT_I32:
    return 4;
  case MGRT_F64:
  case MGRT_I64:
    return 8;
  case MGRT_U8:
  case MGRT_I8:
  case MGRT_BOOL:
    return 1;
  default:
    return 0;
  }
}

const char *mgrt_dtype_name(int dtype) {
  switch (dtype) {
  case MGRT_F32:
    return "f32";
  case MGRT_F64:
    return "f64";
  case MGRT_I64:
    return "i64";
  case MGRT_I32:
    return "i32";
  case MGRT_I8:
    return "i8";
  case MGRT_U8:
    return "u8";
  case MGRT_BOOL:
    return "bool";
  default:
    return "?";
  }
}

int64_t mgrt_tensor_numel(const mgrt_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; ++i)
    n *= t->shape[i];
  return n;
}

mgrt_status mgrt_tensor_alloc(mgrt_tensor *t, int dtype, int rank,
                              const int64_t *shape) {
  if (!t || rank < 0 || rank > MGRT_MAX_RANK || (rank > 0 && !shape) ||
      mgrt_dtype_size(dtype) == 0)
    return MGRT_ERR_ARGUMENT;
  std::memset(t, 0, sizeof *t);
  size_t bytes = mgrt_dtype_size(dtype);
  for (int i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      return MGRT_ERR_ARGUMENT;
    if (shape[i] != 0 && bytes > SIZE_MAX / (size_t)shape[i])
      return MGRT_ERR_NOMEM;
    bytes *= (size_t)shape[i];
    t->shape[i] = shape[i];
  }
  void *data = mgrt_alloc(bytes);
  if (!data)
    return MGRT_ERR_NOMEM;
  std::memset(data, 0, bytes);
  t->dtype = dtype;
  t->rank = rank;
  t->data = data;
  return MGRT_OK;
}

void mgrt_tensor_free(mgrt_tensor *t) {
  if (!t)
    return;
  mgrt_free(t->data);
  std::memset(t, 0, sizeof *t);
}

} // extern "C"
