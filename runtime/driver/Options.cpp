//===- Options.cpp - Command line of a compiled model ---------------------===//
//
// Accepts "--flag value" and "--flag=value" spellings.
//
//===----------------------------------------------------------------------===//

#include "driver/Options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mgrt {

std::string usage(const char *prog) {
  std::string p = prog ? prog : "model";
  return "usage: " + p +
         " --mode infer --input NAME=FILE.npy ... --output-dir DIR\n"
         "       [--repeat N] [--quiet]\n"
         "       " + p + " --help\n"
         "\n"
         "  --mode MODE          infer (default); train is not implemented yet\n"
         "  --input NAME=FILE    a model input as a .npy file (one per input)\n"
         "  --output-dir DIR     where each output is written as NAME.npy\n"
         "                       (created if missing)\n"
         "  --repeat N           run the model N times, report the mean time\n"
         "  --quiet              print only the summary line\n"
         "  MEGAGRAPH_NUM_THREADS=N in the environment sets the kernel threads\n"
         "\n"
         "exit codes: 0 ok, 1 usage / input / output error, 2 unsupported mode\n";
}

bool parseOptions(int argc, char **argv, Options &opts, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasValue = false;
    if (arg.compare(0, 2, "--") == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        hasValue = true;
      }
    }
    // Fetches the value of a flag that takes one.
    auto takeValue = [&]() {
      if (hasValue)
        return true;
      if (i + 1 >= argc) {
        error = arg + " needs a value";
        return false;
      }
      value = argv[++i];
      return true;
    };

    if (arg == "--help" || arg == "-h") {
      opts.help = true;
    } else if (arg == "--quiet") {
      opts.quiet = true;
    } else if (arg == "--mode") {
      if (!takeValue())
        return false;
      opts.mode = value;
    } else if (arg == "--output-dir") {
      if (!takeValue())
        return false;
      if (value.empty()) {
        error = "--output-dir needs a non-empty directory";
        return false;
      }
      opts.outputDir = value;
    } else if (arg == "--repeat") {
      if (!takeValue())
        return false;
      char *end = nullptr;
      errno = 0;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno || n < 1) {
        error = "--repeat needs a positive integer, got '" + value + "'";
        return false;
      }
      opts.repeat = n;
    } else if (arg == "--input") {
      if (!takeValue())
        return false;
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
        error = "--input needs NAME=FILE.npy, got '" + value + "'";
        return false;
      }
      opts.inputs.emplace_back(value.substr(0, eq), value.substr(eq + 1));
    } else {
      error = "unknown argument '" + std::string(argv[i]) + "'";
      return false;
    }
  }
  return true;
}

} // namespace mgrt
