//===- Export.h - The trained parameters out of a training run --*- C++ -*-===//
//
// Internal to the runtime. After training, --export-npy DIR writes one
// DIR/<name>.npy per trained parameter: float32, named by its ONNX
// initializer (a '/' in the name becomes '_', as --dump-inputs does) and
// in its ONNX shape. The values come from the model's state table
// (mgrt_model_info::state): the parameter globals the compiled step
// updates in place, or under ZeRO-3 the packed bucket shards, gathered
// from every rank and cut into the parameters. The lead rank writes.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_EXPORT_H
#define MEGAGRAPH_RUNTIME_DRIVER_EXPORT_H

#include "megagraph/Runtime.h"

#include <string>
#include <vector>

namespace mgrt {

/// One trained parameter's current values.
struct ParameterValues {
  const mgrt_state_info *info = nullptr;
  std::vector<float> values;
};

/// Whether `model`'s parameters can be read in this process: the model
/// has a state table with every parameter's storage, and its plan is not
/// pipelined (each stage holds only its own parameters). False with
/// `error` naming what is missing.
bool canExportParameters(const mgrt_model_info &model, std::string &error);

/// Every parameter of `model` (state table order) with its trained values.
/// Under ZeRO-3 every rank of the job must call it (the buckets are
/// all-gathered). False with `error`.
bool readParameters(const mgrt_model_info &model,
                    std::vector<ParameterValues> &out, std::string &error);

/// Writes `params` as DIR/<name>.npy (creating DIR); false with `error`
/// naming the file.
bool writeParametersNpy(const std::vector<ParameterValues> &params,
                        const std::string &dir, std::string &error);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_EXPORT_H
