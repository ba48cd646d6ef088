//===- TargetBackend.cpp - Defaults of the target interface ---------------===//
//
// Part of MegaGraph. See megagraph/Target/TargetBackend.h.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Target/TargetBackend.h"

using namespace mlir;
using namespace megagraph;

TargetBackend::~TargetBackend() = default;

LogicalResult TargetBackend::getRuntimeLinkFiles(const CompileOptions &,
                                                 std::vector<std::string> &,
                                                 std::string &) const {
  return success();
}
