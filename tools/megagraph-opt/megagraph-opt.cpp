//===- megagraph-opt.cpp - MegaGraph optimizer driver -----------*- C++ -*-===//
//
// Part of MegaGraph. An mlir-opt for the gt dialect: parses .mlir, runs a
// pass pipeline (gt passes plus the upstream passes MegaGraph uses), prints
// the result. Used by lit tests and for debugging pipelines.
//
//===----------------------------------------------------------------------===//

#include "megagraph/InitAllMegaGraph.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  megagraph::registerAllPasses();
  mlir::DialectRegistry registry;
  megagraph::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "MegaGraph optimizer driver\n", registry));
}
