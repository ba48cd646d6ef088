//===- InitAll.cpp - Registration shared by the tools -----------*- C++ -*-===//
//
// Part of MegaGraph.
//
//===----------------------------------------------------------------------===//

#include "megagraph/InitAllMegaGraph.h"

#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/ShardingInterfaceImpl.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/Extensions/AllExtensions.h"
#include "mlir/Dialect/Tensor/IR/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void megagraph::registerAllDialects(mlir::DialectRegistry &registry) {
  registry
      .insert<gt::GTDialect, mlir::arith::ArithDialect,
              mlir::bufferization::BufferizationDialect, mlir::DLTIDialect,
              mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
              mlir::LLVM::LLVMDialect, mlir::math::MathDialect,
              mlir::memref::MemRefDialect, mlir::ml_program::MLProgramDialect,
              mlir::scf::SCFDialect, mlir::shard::ShardDialect,
              mlir::tensor::TensorDialect, mlir::tosa::TosaDialect>();
  // Upstream sharding rules, so sharding-propagation covers what the
  // importer produces.
  mlir::arith::registerShardingInterfaceExternalModels(registry);
  mlir::linalg::registerShardingInterfaceExternalModels(registry);
  mlir::tensor::registerShardingInterfaceExternalModels(registry);
  mlir::tosa::registerShardingInterfaceExternalModels(registry);
  mlir::func::registerAllExtensions(registry);
  mlir::tensor::registerAllExtensions(registry);
}

void megagraph::registerAllPasses() {
  megagraph::registerMegaGraphPasses();
  mlir::registerTransformsPasses();
  mlir::registerLinalgPasses();
  mlir::tosa::registerTosaPasses();
  mlir::shard::registerShardPasses();
  mlir::bufferization::registerBufferizationPasses();
}
