//===- ModelNames.h - The runtime contract, for the passes ------*- C++ -*-===//
//
// Part of MegaGraph. The names the training and parallelism passes give
// the values the runtime's driver binds (megagraph/ModelABI.h, shared with
// the runtime), as LLVM strings. The grids' names are the dialect's
// (megagraph/Dialect/GT/GTNames.h).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_SUPPORT_MODELNAMES_H
#define MEGAGRAPH_SUPPORT_MODELNAMES_H

#include "megagraph/ModelABI.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace megagraph::abi {

constexpr llvm::StringLiteral kLabels = MGRT_NAME_LABELS;
constexpr llvm::StringLiteral kLabelMask = MGRT_NAME_LABEL_MASK;
constexpr llvm::StringLiteral kEvalMask = MGRT_NAME_EVAL_MASK;
constexpr llvm::StringLiteral kLoss = MGRT_NAME_LOSS;
constexpr llvm::StringLiteral kCorrect = MGRT_NAME_CORRECT;
constexpr llvm::StringLiteral kEvalCorrect = MGRT_NAME_EVAL_CORRECT;
constexpr llvm::StringLiteral kLossSeed = MGRT_NAME_LOSS_SEED;
/// The dense normalized adjacency of Kipf's GCN and the edge list
/// gt-sparse-adjacency replaces it with.
constexpr llvm::StringLiteral kAdjNorm = MGRT_NAME_ADJ_NORM;
constexpr llvm::StringLiteral kEdgeIndex = MGRT_NAME_EDGE_INDEX;
constexpr llvm::StringLiteral kGradientPrefix = MGRT_PREFIX_GRADIENT;
/// Attribute of a training step function with a classification loss: the
/// number of classes its `labels` input indexes (the logits' last
/// dimension). The entry table carries it in the labels' `index`
/// (mgrt_tensor_info), so the driver can refuse labels out of range.
constexpr llvm::StringLiteral kNumClassesAttr = "gt.num_classes";

/// "grad:<param>": the gradient of parameter `param`.
inline std::string gradientName(llvm::StringRef param) {
  return (kGradientPrefix + param).str();
}
inline bool isGradientName(llvm::StringRef name) {
  return name.starts_with(kGradientPrefix);
}
/// The parameter of a gradient name ("" for other names).
inline llvm::StringRef parameterOfGradient(llvm::StringRef name) {
  return isGradientName(name) ? name.drop_front(kGradientPrefix.size()) : "";
}
/// The name of the cotangent input of output `name` ("d" + name).
inline std::string cotangentName(llvm::StringRef name) {
  return (MGRT_PREFIX_COTANGENT + name).str();
}
/// "act<j>": stage boundary value j.
inline std::string activationName(unsigned j) {
  return (MGRT_PREFIX_ACTIVATION + llvm::Twine(j)).str();
}
/// "saved<j>": forward value j kept for the stage's backward.
inline std::string savedName(unsigned j) {
  return (MGRT_PREFIX_SAVED + llvm::Twine(j)).str();
}
/// "s<k>.fwd" | "s<k>.bwd" | "s<k>.update".
inline std::string stageEntryName(int stage, mgrt_stage_entry_kind kind) {
  char buf[32];
  return mgrt_stage_entry_name(buf, sizeof buf, stage, kind);
}

} // namespace megagraph::abi

#endif // MEGAGRAPH_SUPPORT_MODELNAMES_H
