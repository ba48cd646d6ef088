//===- GTRaisePatterns.h - Pattern sets of gt-raise -------------*- C++ -*-===//
//
// Part of MegaGraph. gt-raise's patterns that live in their own files.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_RAISE_GTRAISEPATTERNS_H
#define MEGAGRAPH_PASSES_RAISE_GTRAISEPATTERNS_H

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/Statistic.h"

namespace megagraph {

/// Message passing: row scatter-adds (of gathered, weighted rows) ->
/// gt.csr_transpose + gt.spmm. `count` counts the raised scatters.
void populateRaiseSpmmPatterns(mlir::RewritePatternSet &patterns,
                               llvm::Statistic &count);

} // namespace megagraph

#endif // MEGAGRAPH_PASSES_RAISE_GTRAISEPATTERNS_H
