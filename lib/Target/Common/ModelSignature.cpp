//===- ModelSignature.cpp - The inputs and outputs of a model ---*- C++ -*-===//
//
// Part of MegaGraph. See megagraph/Target/Executable.h. Reads @main, the
// pipeline stage entries and the plan into the tables the entry table
// (EntryTable.cpp) emits.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Target/Executable.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/ModelABI.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace megagraph;

namespace {

/// The mgrt_dtype of element type `t`; 0 when the runtime has none.
int dtypeOf(Type t) {
  if (t.isF32())
    return MGRT_F32;
  if (t.isF64())
    return MGRT_F64;
  if (t.isInteger(64))
    return MGRT_I64;
  if (t.isInteger(32))
    return MGRT_I32;
  if (t.isInteger(8))
    return MGRT_I8;
  if (t.isInteger(1))
    return MGRT_BOOL;
  return 0;
}

} // namespace

FailureOr<ModelSignature> megagraph::getModelSignature(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("no func.func @main to compile"), failure();
  ModelSignature sig;
  auto describe = [&](Type type, StringAttr name, size_t index,
                      bool isInput) -> FailureOr<TensorSignature> {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::string what =
        (isInput ? "input #" : "output #") + std::to_string(index);
    if (!tensor || !tensor.hasStaticShape())
      return main.emitError()
                 << what << " must be a statically shaped tensor, got " << type,
             failure();
    TensorSignature t;
    t.name = name ? name.str()
                  : (isInput ? "input" : "output") + std::to_string(index);
    t.dtype = dtypeOf(tensor.getElementType());
    if (!t.dtype)
      return main.emitError() << what << " has unsupported element type "
                              << tensor.getElementType(),
             failure();
    if (tensor.getRank() > MGRT_MAX_RANK)
      return main.emitError()
                 << what << " has rank " << tensor.getRank()
                 << "; the runtime takes at most " << MGRT_MAX_RANK,
             failure();
    t.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    t.role = mgrt_role_of_name(t.name.c_str(), &t.index);
    return t;
  };
  for (auto [i, type] : llvm::enumerate(main.getArgumentTypes())) {
    FailureOr<TensorSignature> t = describe(
        type, main.getArgAttrOfType<StringAttr>(i, "gt.name"), i, true);
    if (failed(t))
      return failure();
    // Class labels: the number of classes, for the driver's range check.
    if (auto classes = main->getAttrOfType<IntegerAttr>(abi::kNumClassesAttr);
        classes && t->role == MGRT_ROLE_LABELS)
      t->index = static_cast<int>(classes.getInt());
    sig.inputs.push_back(*t);
  }
  for (auto [i, type] : llvm::enumerate(main.getResultTypes())) {
    FailureOr<TensorSignature> t = describe(
        type, main.getResultAttrOfType<StringAttr>(i, "gt.name"), i, false);
    if (failed(t))
      return failure();
    sig.outputs.push_back(*t);
  }
  if (auto plan = module->getAttrOfType<gt::PlanAttr>("gt.plan"))
    sig.plan = fromAttr(plan);
  // Pipeline stage entries (gt-pipeline-train).
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto entry = fn->getAttrOfType<StringAttr>("gt.pipeline_entry");
    if (!entry)
      continue;
    EntrySignature e;
    e.name = entry.str();
    e.symbol = fn.getSymName().str();
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      FailureOr<TensorSignature> t = describe(
          type, fn.getArgAttrOfType<StringAttr>(i, "gt.name"), i, true);
      if (failed(t))
        return failure();
      e.inputs.push_back(*t);
    }
    for (auto [i, type] : llvm::enumerate(fn.getResultTypes())) {
      FailureOr<TensorSignature> t = describe(
          type, fn.getResultAttrOfType<StringAttr>(i, "gt.name"), i, false);
      if (failed(t))
        return failure();
      e.outputs.push_back(*t);
    }
    sig.entries.push_back(std::move(e));
  }
  return sig;
}
