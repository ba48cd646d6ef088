//===- Options.h - Command line of a compiled model -------------*- C++ -*-===//
//
// Internal to the runtime: parsing of the mgrt_main command line.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_OPTIONS_H
#define MEGAGRAPH_RUNTIME_DRIVER_OPTIONS_H

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
};

/// Parses argv[1..argc); on a usage error returns false and sets `error`.
bool parseOptions(int argc, char **argv, Options &opts, std::string &error);

/// The --help text for program `prog`.
std::string usage(const char *prog);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_OPTIONS_H
