//===- Passes.h - MegaGraph passes ------------------------------*- C++ -*-===//
//
// Part of MegaGraph. Declarations and registration of every pass in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_PASSES_H
#define MEGAGRAPH_PASSES_PASSES_H

#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Passes/GradientBuckets.h"
#include "megagraph/Passes/OptimizerPacking.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace megagraph {

#define GEN_PASS_DECL
#include "megagraph/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "megagraph/Passes/Passes.h.inc"

/// Copies gt-optimizer's recipe options (GTOptimizerRecipeOptions in
/// Passes.td: the optimizer, its hyperparameters, the LR schedule and
/// gradient clipping) between option sets that declare them under the same
/// names.
template <typename From, typename To>
void copyOptimizerRecipe(const From &from, To &to) {
  to.optimizer = from.optimizer;
  to.learningRate = from.learningRate;
  to.weightDecay = from.weightDecay;
  to.momentum = from.momentum;
  to.dampening = from.dampening;
  to.nesterov = from.nesterov;
  to.beta1 = from.beta1;
  to.beta2 = from.beta2;
  to.epsilon = from.epsilon;
  to.lrSchedule = from.lrSchedule;
  to.warmupSteps = from.warmupSteps;
  to.totalSteps = from.totalSteps;
  to.minLr = from.minLr;
  to.power = from.power;
  to.clipGradNorm = from.clipGradNorm;
}

} // namespace megagraph

#endif // MEGAGRAPH_PASSES_PASSES_H
