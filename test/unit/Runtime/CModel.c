/*===- CModel.c - A fake compiled model written in C ---------------------===*
 *
 * Checks that Runtime.h is valid C and that a C main linked only with
 * megagraph_rt works, as a generated model executable will:
 *   MegaGraphRuntimeCModel --input x=X.npy --output-dir DIR  (y = 2x + 1)
 *===----------------------------------------------------------------------===*/

#include "megagraph/Runtime.h"

static void entry(void **descriptors) {
  mgrt_memref_f32_2 *x = (mgrt_memref_f32_2 *)descriptors[0];
  mgrt_memref_f32_2 *y = (mgrt_memref_f32_2 *)descriptors[1];
  for (int64_t i = 0; i < x->sizes[0]; ++i)
    for (int64_t j = 0; j < x->sizes[1]; ++j)
      y->aligned[y->offset + i * y->strides[0] + j * y->strides[1]] =
          2.f * x->aligned[x->offset + i * x->strides[0] + j * x->strides[1]] +
          1.f;
}

static const mgrt_tensor_info inputs[] = {{"x", MGRT_F32, 2, {2, 2}}};
static const mgrt_tensor_info outputs[] = {{"y", MGRT_F32, 2, {2, 2}}};
static const mgrt_model_info model = {"c_model", 1, inputs, 1, outputs, entry};

int main(int argc, char **argv) { return mgrt_main(argc, argv, &model); }
