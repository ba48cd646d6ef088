//===- GTMoaOps.td - gt ops of the mixture of accelerators -*- tablegen -*-===//
//
// Part of MegaGraph. The pipelined op gt-mixture-accelerators builds after
// autodiff for a transform followed by an aggregation. It shares GTOps.td's
// constraints and traits; its own declarations are generated on their own
// (GTMoaOps.h.inc, filtered to its name), so that adding it does not touch
// the header every gt user includes. Verification and type inference in
// GTOps.cpp, registration in GTDialect.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTMOAOPS_TD
#define MEGAGRAPH_DIALECT_GT_GTMOAOPS_TD

include "megagraph/Dialect/GT/GTOps.td"

def GT_LinearSpmmOp : GT_ComputeOp<"linear_spmm", [AttrSizedOperandSegments],
    ["getFlops"]> {
  let summary = "Transform and aggregation pipelined over row chunks";
  let description = [{
    The transform-first half of MixGCN's mixture of accelerators
    (gt-mixture-accelerators): `transformed = scale * (input @ weight +
    bias)` with `input` `[M, D]`, `weight` `[D, F]`, `bias` `[F]` and
    `scale` `[M, 1]` (both optional), and `result = gt.spmm(row_ptr,
    col_idx, values, transformed)` `[N, F]`: GCN's forward `A (X W)`. The
    runtime cuts the M transformed rows into `chunks` chunks and orders the
    aggregated rows by the chunk of their largest column, so that the rows
    whose neighbours are all in chunks 0..k are aggregated while chunk k+1
    is transformed. Both results are returned. Built after autodiff: no
    gradient rule.

    ```mlir
    %t, %y = gt.linear_spmm %rp, %ci, %w, %x, %wt chunks = 4
        : (tensor<101xi64>, tensor<800xi64>, tensor<800xf32>,
           tensor<100x16xf32>, tensor<16x32xf32>)
        -> (tensor<100x32xf32>, tensor<100x32xf32>)
    ```
  }];
  let arguments = (ins GT_IndexTensor:$row_ptr, GT_IndexTensor:$col_idx,
                   GT_FloatTensor:$values, GT_FloatTensor:$input,
                   GT_FloatTensor:$weight, Optional<GT_FloatTensor>:$scale,
                   Optional<GT_FloatTensor>:$bias,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$chunks);
  let results = (outs GT_FloatTensor:$transformed, GT_FloatTensor:$result);
  let assemblyFormat = [{
    $row_ptr `,` $col_idx `,` $values `,` $input `,` $weight
    (`scale` `(` $scale^ `)`)? (`bias` `(` $bias^ `)`)? `chunks` `=` $chunks
    attr-dict `:` functional-type(operands, results)
  }];
}

#endif // MEGAGRAPH_DIALECT_GT_GTMOAOPS_TD
