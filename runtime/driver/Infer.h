//===- Infer.h - The command line of a compiled model -----------*- C++ -*-===//
//
// Part of MegaGraph's runtime driver. One command line for every compiled
// model; what --mode train runs is a parameter, so an inference executable
// (mgrt_infer_main) does not link the training driver and its libraries.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_INFER_H
#define MEGAGRAPH_RUNTIME_DRIVER_INFER_H

#include "megagraph/Runtime.h"

#include "driver/Options.h"

namespace mgrt {

/// What --mode train runs; returns the process exit code.
using TrainMode = int (*)(const mgrt_model_info &model, const Options &opts);

/// Checks the model info, parses the options, prints --help and runs
/// --mode infer itself or --mode train through `trainMode`; returns the
/// process exit code (mgrt_main's).
int runCommandLine(int argc, char **argv, const mgrt_model_info *model,
                   TrainMode trainMode);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_INFER_H
