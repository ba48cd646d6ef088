//===- Inputs.h - Loading and checking a model's inputs ---------*- C++ -*-===//
//
// Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_INPUTS_H
#define MEGAGRAPH_RUNTIME_DRIVER_INPUTS_H

#include "megagraph/Runtime.h"

#include <string>
#include <utility>
#include <vector>

namespace mgrt {

/// mkdir -p; returns an error message or "".
std::string makeDirectories(const std::string &dir);

/// A tensor name as a file name: '/' becomes '_'.
std::string fileNameOf(const char *name);

/// "f32 [2, 3]".
std::string describe(int dtype, int rank, const int64_t *shape);

/// An error naming the first value of `t` (input `info`, of its shape)
/// outside the embedding table the input indexes (mgrt_index_bound), or ""
/// when every value is in range or the table's size is unknown.
std::string checkIndexRange(const mgrt_tensor_info &info, const mgrt_tensor &t);

/// Reads the file given for each model input into tensors[i] (in model
/// order), converting f64 -> f32, i32 <-> i64 and u8 <-> bool with a note on
/// stderr (unless quiet). Every problem (missing, unknown or repeated name,
/// unreadable file, wrong dtype or shape, an embedding index out of range) is
/// appended to `errors`; on any error no tensor is left allocated. Returns
/// errors.empty().
bool loadInputs(const mgrt_model_info &model,
                const std::vector<std::pair<std::string, std::string>> &given,
                bool quiet, std::vector<mgrt_tensor> &tensors,
                std::vector<std::string> &errors);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_INPUTS_H
