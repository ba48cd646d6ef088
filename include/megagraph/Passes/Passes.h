//===- Passes.h - MegaGraph passes ------------------------------*- C++ -*-===//
//
// Part of MegaGraph. Declarations and registration of every pass in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_PASSES_H
#define MEGAGRAPH_PASSES_PASSES_H

#include "megagraph/Dialect/GT/GTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace megagraph {

#define GEN_PASS_DECL
#include "megagraph/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "megagraph/Passes/Passes.h.inc"

} // namespace megagraph

#endif // MEGAGRAPH_PASSES_PASSES_H
