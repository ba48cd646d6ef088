//===- GTExportEntries.cpp - The runtime's C entry points -------*- C++ -*-===//
//
// Part of MegaGraph. The functions the runtime calls are @main (the model
// or its training step) and the pipeline stage entries; the entry table
// calls them through MLIR's C interface. @main is renamed, since `main` is
// the executable's own symbol, and the `gt.name` attributes the signature
// was read from are dropped so that the LLVM lowering does not see them.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/Passes.h"

#include "megagraph/ModelABI.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace megagraph {
#define GEN_PASS_DEF_GTEXPORTENTRIES
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-export-entries"

using namespace mlir;
using namespace megagraph;

namespace {

/// Marks `fn` for the C interface.
void exportForC(func::FuncOp fn) {
  fn->setAttr("llvm.emit_c_interface", UnitAttr::get(fn.getContext()));
}

struct GTExportEntries
    : public megagraph::impl::GTExportEntriesBase<GTExportEntries> {
  using GTExportEntriesBase::GTExportEntriesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // 1. @main becomes the model symbol.
    if (auto main = module.lookupSymbol<func::FuncOp>("main")) {
      if (failed(SymbolTable::replaceAllSymbolUses(
              main, StringAttr::get(&getContext(), MGRT_MODEL_SYMBOL), module)))
        return signalPassFailure();
      main.setSymName(MGRT_MODEL_SYMBOL);
      exportForC(main);
      auto name = StringAttr::get(&getContext(), gt::kTensorNameAttr);
      main->removeAttr(abi::kNumClassesAttr); // in the entry table by now
      for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
        main.removeArgAttr(i, name);
      for (unsigned i = 0, e = main.getNumResults(); i < e; ++i)
        main.removeResultAttr(i, name);
    }
    // 2. The pipeline stage entries keep their names and lose every
    //    argument and result attribute.
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr("gt.pipeline_entry"))
        continue;
      exportForC(fn);
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
        fn.setArgAttrs(i, ArrayRef<NamedAttribute>{});
      for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
        fn.setResultAttrs(i, ArrayRef<NamedAttribute>{});
    }
  }
};

} // namespace
