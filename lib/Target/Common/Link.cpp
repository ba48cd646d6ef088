//===- Link.cpp - Linking a compiled model into an executable ---*- C++ -*-===//
//
// Part of MegaGraph. See megagraph/Target/Executable.h. The object file
// (model, entry table and main()), the runtime driver and the runtime; the
// backend's runtime first (its link file), the training driver's libraries
// for training executables only.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Target/Executable.h"

#include "megagraph/ModelABI.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

using namespace mlir;
using namespace megagraph;

bool megagraph::needsTrainingDriver(const ModelSignature &signature) {
  return signature.plan || !signature.entries.empty() ||
         llvm::any_of(signature.outputs, [](const TensorSignature &t) {
           return t.role == MGRT_ROLE_LOSS;
         });
}

LogicalResult megagraph::linkExecutable(llvm::StringRef objectPath,
                                        llvm::StringRef outputPath,
                                        bool training,
                                        const TargetBackend &backend,
                                        const CompileOptions &options,
                                        std::string &error) {
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName(options.cxx);
  if (!cxx) {
    error = "cannot find the C++ compiler '" + options.cxx +
            "' to link the executable (install g++)";
    return failure();
  }
  std::string driverLib = options.runtimeLibDir + "/libmegagraph_driver.a";
  std::string lib = options.runtimeLibDir + "/libmegagraph_rt.a";
  for (const std::string &path : {driverLib, lib}) {
    if (!llvm::sys::fs::exists(path)) {
      error = "runtime library not found at " + path +
              "; build the megagraph_rt and megagraph_driver targets or pass "
              "--runtime-dir";
      return failure();
    }
  }
  // The driver archive first: an inference main() calls mgrt_infer_main,
  // which pulls only the driver's command line, so the data layer (METIS,
  // zlib) and the communication runtime (MPI) stay out of the executable.
  std::vector<std::string> args = {
      *cxx, objectPath.str(), driverLib, lib, "-lopenblas", "-lpthread", "-lm",
      "-o", outputPath.str()};
  // Further libraries, one per line, written next to the archives: first
  // the backend's runtime (--target cuda: runtime/cuda/CMakeLists.txt);
  // for training the data layer's (runtime/CMakeLists.txt) and MPI
  // (runtime/comm/CMakeLists.txt).
  auto addLinkFile = [&](const std::string &path) {
    auto extra = llvm::MemoryBuffer::getFile(path);
    if (!extra)
      return false;
    SmallVector<StringRef> lines;
    (*extra)->getBuffer().split(lines, '\n', -1, false);
    auto at = args.end() - 2; // before "-o OUT"
    for (StringRef line : lines)
      if (!line.trim().empty())
        at = args.insert(at, line.trim().str()) + 1;
    return true;
  };
  std::vector<std::string> backendFiles;
  if (failed(backend.getRuntimeLinkFiles(options, backendFiles, error)))
    return failure();
  for (const std::string &file : backendFiles) {
    if (!addLinkFile(file)) {
      error = "cannot read " + file;
      return failure();
    }
  }
  if (training) {
    addLinkFile(options.runtimeLibDir + "/megagraph_driver.link");
    addLinkFile(options.runtimeLibDir + "/megagraph_rt.link");
  }
  SmallVector<StringRef> refs(args.begin(), args.end());
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*cxx, refs, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    error = "linking failed (" + options.cxx + " exited with " +
            std::to_string(rc) + ")" + (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}
