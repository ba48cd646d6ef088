//===- Export.h - The trained parameters out of a training run --*- C++ -*-===//
//
// Internal to the runtime. After training, --export-npy DIR writes one
// DIR/<name>.npy per trained parameter: float32, named by its ONNX
// initializer (a '/' in the name becomes '_', as --dump-inputs does) and
// in its ONNX shape. The values come from the model's state table
// (mgrt_model_info::state): the parameter globals the compiled step
// updates in place (under pp, those of the rank whose stage updates each
// one, sent to every rank), or under ZeRO-3 the packed bucket shards,
// gathered from every rank and cut into the parameters. The lead rank
// writes.
//
// --export-onnx FILE --source-model SRC writes SRC, the ONNX model the
// executable was compiled from, with each trained parameter's values in
// its initializer. The driver links no protobuf library: the
// model is rewritten at the protobuf wire level. Every field is copied as
// it is but the trained initializers (ModelProto.graph = 7,
// GraphProto.initializer = 5), which keep their dims, name and doc string
// and get data_type FLOAT and the values as raw_data (float_data,
// raw_data, external_data and data_location are dropped: the exported
// file is self-contained). A parameter that is no initializer of the file
// (an untied copy of a shared initializer) or of another element type or
// size is refused, before training.
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
/// has a state table with every parameter's storage. False with `error`
/// naming what is missing.
bool canExportParameters(const mgrt_model_info &model, std::string &error);

/// Every parameter of `model` (state table order) with its trained values.
/// Under ZeRO-3 and pp every rank of the job must call it: the buckets are
/// all-gathered, and each pipelined parameter is broadcast from the rank of
/// the stage that updates it (StateLayout.h). With `gather` false nothing
/// is exchanged and only the names and sizes are right (a dry run before
/// training). False with `error`.
bool readParameters(const mgrt_model_info &model,
                    std::vector<ParameterValues> &out, std::string &error,
                    bool gather = true);

/// Writes `params` as DIR/<name>.npy (creating DIR); false with `error`
/// naming the file.
bool writeParametersNpy(const std::vector<ParameterValues> &params,
                        const std::string &dir, std::string &error);

/// The ONNX model at `source` with `params` in its initializers, as bytes
/// in `out`; false with `error` (unreadable or malformed file, a
/// parameter that is no float initializer of its size).
bool rewriteOnnx(const std::string &source,
                 const std::vector<ParameterValues> &params, std::string &out,
                 std::string &error);

/// Writes `bytes` to `path` (through a temporary name and a rename).
bool writeBytes(const std::string &path, const std::string &bytes,
                std::string &error);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_EXPORT_H
