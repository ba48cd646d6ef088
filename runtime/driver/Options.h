//===- Options.h - Command line of a compiled model -------------*- C++ -*-===//
//
// Internal to the runtime: parsing of the mgrt_main command line.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_OPTIONS_H
#define MEGAGRAPH_RUNTIME_DRIVER_OPTIONS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mgrt {

struct Options {
  bool help = false;
  std::string mode = "infer";
  std::vector<std::pair<std::string, std::string>> inputs; // name, file
  std::string outputDir;
  long repeat = 1;
  bool quiet = false;

  // --mode train (driver/Train.cpp).
  std::string data;                // --data SPEC
  long steps = 0;                  // --steps K (required)
  long batch = 0;                  // --batch B (0: the model's)
  long seqLen = 0;                 // --seq-len S (0: the model's)
  std::string logJson;             // --log-json FILE
  uint64_t seed = 1;               // --seed N: batch order and train split
  long maxDistance = 8;            // --max-distance D of the spd input
  long categories = 16;            // --categories V of integer features
  double trainFraction = 0.8;      // --train-fraction F
  std::string partition = "metis"; // --partition metis|greedy
  std::string parts = "2,4,8";     // --parts LIST (--mode graph-stats)
  std::string reorder = "auto";    // --reorder none|auto (NodeOrder.h)
  std::string dumpInputs;          // --dump-inputs DIR
  std::string exportNpy;           // --export-npy DIR (driver/Export.h)
  std::string exportOnnx;          // --export-onnx FILE
  std::string sourceModel;         // --source-model FILE (for export-onnx)
  std::string checkpointDir;       // --checkpoint-dir DIR (Checkpoint.h)
  long checkpointEvery = 0;        // --checkpoint-every K (0: at the end)
  std::string resume;              // --resume DIR
  // --mode eval and evaluation during training (Train.h).
  std::string checkpoint;     // --checkpoint DIR: weights of --mode eval
  std::string split = "test"; // --split test|train
  long evalEvery = 0;         // --eval-every K (0: never)
  long evalSteps = 0;
  std::string onNonfinite = "stop"; // --on-nonfinite stop|skip-step         //
                                    // --eval-steps N batches (0: one epoch)
  /// Flags of the other mode that were given (checked by mgrt_main).
  std::vector<std::string> inferFlags, trainFlags;
};

/// Parses argv[1..argc); on a usage error returns false and sets `error`.
bool parseOptions(int argc, char **argv, Options &opts, std::string &error);

/// The --help text for program `prog`.
std::string usage(const char *prog);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_OPTIONS_H
