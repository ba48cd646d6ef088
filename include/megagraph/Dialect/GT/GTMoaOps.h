//===- GTMoaOps.h - gt ops of the mixture of accelerators -------*- C++ -*-===//
//
// Part of MegaGraph. gt.linear_spmm (GTMoaOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTMOAOPS_H
#define MEGAGRAPH_DIALECT_GT_GTMOAOPS_H

#include "megagraph/Dialect/GT/GTOps.h"

#define GET_OP_CLASSES
#include "megagraph/Dialect/GT/GTMoaOps.h.inc"

#endif // MEGAGRAPH_DIALECT_GT_GTMOAOPS_H
