//===- GTMoaOps.h - gt ops of the mixture of accelerators -------*- C++ -*-===//
//
// Part of MegaGraph. gt.linear_spmm (GTMoaOps.td) and the attribute of a
// gt.spmm_linear whose aggregated columns switch to row blocks.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTMOAOPS_H
#define MEGAGRAPH_DIALECT_GT_GTMOAOPS_H

#include "megagraph/Dialect/GT/GTOps.h"

#define GET_OP_CLASSES
#include "megagraph/Dialect/GT/GTMoaOps.h.inc"

namespace megagraph::gt {

/// On gt.spmm_linear under the mixture of parallelism (--plan
/// mop=P,moa=1): `gt.mop_switch = #gt.halo<parts = P, nodes = N>`. The
/// aggregation is feature-parallel (all N rows, this rank's D / P columns
/// of the input), then an all-to-all switches the aggregated rows to this
/// rank's block of N / P rows and all D columns, which the transform
/// reads; the kernel pipelines the three over chunks of every block.
constexpr llvm::StringLiteral kMopSwitchAttr = "gt.mop_switch";

} // namespace megagraph::gt

#endif // MEGAGRAPH_DIALECT_GT_GTMOAOPS_H
