//===- GTOps.td - gt dialect operations -------------------*- tablegen -*-===//
//
// Part of MegaGraph. Each op carries its contract in one place: operands and
// assembly here; verification and result-type inference in GTOps.cpp; cost
// and gradient rules through the interfaces of GTInterfaces.td.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTOPS_TD
#define MEGAGRAPH_DIALECT_GT_GTOPS_TD

include "megagraph/Dialect/GT/GTDialect.td"
include "megagraph/Dialect/GT/GTInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def GT_FloatTensor : RankedTensorOf<[AnyFloat]>;
def GT_IndexTensor : RankedTensorOf<[AnySignlessInteger]>;
def GT_MaskTensor : RankedTensorOf<[I1]>;

/// Pure compute op with result-type inference, a cost rule and a gradient
/// rule: the traits every gt tensor op shares.
class GT_ComputeOp<string mnemonic, list<Trait> traits = [],
                   list<string> costMethods = ["getFlops"],
                   list<string> gradientMethods = []>
    : GT_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor,
          DeclareOpInterfaceMethods<GT_CostOpInterface, costMethods>,
          DeclareOpInterfaceMethods<GT_GradientOpInterface, gradientMethods>],
          traits)> {
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def GT_AttentionOp : GT_ComputeOp<"attention", [AttrSizedOperandSegments],
    ["getFlops", "getActivationBytes", "getTransientBytes"],
    ["buildGradient"]> {
  let summary = "Multi-head scaled dot-product attention with additive bias";
  let description = [{
    Computes, per sequence `b` and head `h`,

    ```
    out[b, :, h] = softmax(scale * Q_h K_h^T + bias[b, h] + mask_bias) V_h
    ```

    where `Q_h` is the `h`-th `head_dim = D / num_heads` slice of the hidden
    dimension of `query` (`[B, Sq, D]`), likewise for `key` (`[B, Sk, D]`)
    and `value` (`[B, Sk, Dv]`). The result is `[B, Sq, Dv]`.

    * `bias` (optional) is added to the scores: `[H, Sq, Sk]` or
      `[B|1, H|1, Sq, Sk]`. Under context parallelism `Sq` is a row block of
      the `Sk` keys: each rank holds only its rows of the bias.
    * `mask` (optional, `i1`) broadcasts to `[B, H, Sq, Sk]` from the right
      (`[Sq, Sk]`, `[H|1, Sq, Sk]` or `[B|1, H|1, Sq, Sk]`); `true` keeps a
      score, `false` removes it (a row with no kept score yields zeros).
    * `spatial` (optional, `distance` and `table` together) is Graphormer's
      spatial encoding read in place: `table[clamp(distance[b, i, j], 0,
      V - 1), h]` is added to score `(b, h, i, j)` (and to `bias`, when
      both are given), for an integer `distance` `[Sq, Sk]` or
      `[B|1, Sq, Sk]` and a `table` `[V, H]`. It is what `gt.attention
      bias(gt.spatial_bias %distance, %table)` computes, without the
      `[B, H, Sq, Sk]` bias (`gt-fuse-spatial-bias` creates it). Under
      context parallelism, like the bias, `distance` holds the rank's `Sq`
      query rows and all `Sk` key columns.
    * `scale` defaults to `1/sqrt(head_dim)`.

    The op never implies an `[H, Sq, Sk]` score buffer: lowering uses a
    blockwise online-softmax kernel.

    Example:

    ```mlir
    %o = gt.attention %q, %k, %v bias(%b) heads = 8
        : (tensor<2x128x64xf32>, tensor<2x128x64xf32>, tensor<2x128x64xf32>,
           tensor<8x128x128xf32>) -> tensor<2x128x64xf32>
    ```
  }];
  let arguments = (ins GT_FloatTensor:$query, GT_FloatTensor:$key,
                   GT_FloatTensor:$value,
                   Optional<GT_FloatTensor>:$bias,
                   Optional<GT_MaskTensor>:$mask,
                   Optional<GT_IndexTensor>:$spatial_distance,
                   Optional<GT_FloatTensor>:$spatial_table,
                   ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                   OptionalAttr<F32Attr>:$scale);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`bias` `(` $bias^ `)`)? (`mask` `(` $mask^ `)`)?
    (`spatial` `(` $spatial_distance^ `,` $spatial_table `)`)?
    `heads` `=` $num_heads attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Size of one head's slice of the hidden dimension.
    int64_t getHeadDim();
    /// The scale applied to Q K^T: the `scale` attribute or 1/sqrt(head_dim).
    double getScaleOrDefault();
  }];
}

def GT_AttentionLseOp : GT_ComputeOp<"attention_lse",
    [AttrSizedOperandSegments], ["getFlops"]> {
  let summary = "gt.attention that also returns each row's log-sum-exp";
  let description = [{
    The forward of a `gt.attention` whose gradient is taken: the same
    operands (`spatial` included), attributes and `result`, plus `lse`
    (`[B, H, Sq]`, the element type of `query`), the natural log of `sum_j exp(score_ij)` over the kept
    scores of each query row (`-inf` for a row that keeps none).
    `gt-attention-keep-lse` creates it after autodiff and passes `result`
    and `lse` to the matching `gt.attention_grad`, whose kernel then skips
    recomputing the row statistics. Not differentiable itself.

    ```mlir
    %o, %lse = gt.attention_lse %q, %k, %v bias(%b) heads = 8
        : (tensor<2x128x64xf32>, tensor<2x128x64xf32>, tensor<2x128x64xf32>,
           tensor<8x128x128xf32>) -> (tensor<2x128x64xf32>, tensor<2x8x128xf32>)
    ```
  }];
  let arguments = (ins GT_FloatTensor:$query, GT_FloatTensor:$key,
                   GT_FloatTensor:$value,
                   Optional<GT_FloatTensor>:$bias,
                   Optional<GT_MaskTensor>:$mask,
                   Optional<GT_IndexTensor>:$spatial_distance,
                   Optional<GT_FloatTensor>:$spatial_table,
                   ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                   OptionalAttr<F32Attr>:$scale);
  let results = (outs GT_FloatTensor:$result, GT_FloatTensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`bias` `(` $bias^ `)`)? (`mask` `(` $mask^ `)`)?
    (`spatial` `(` $spatial_distance^ `,` $spatial_table `)`)?
    `heads` `=` $num_heads attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Size of one head's slice of the hidden dimension.
    int64_t getHeadDim();
    /// The scale applied to Q K^T: the `scale` attribute or 1/sqrt(head_dim).
    double getScaleOrDefault();
  }];
}

def GT_AttentionGradOp : GT_ComputeOp<"attention_grad",
    [AttrSizedOperandSegments], ["getFlops", "getTransientBytes"],
    ["buildGradient"]> {
  let summary = "Backward of gt.attention: gradients of query, key, value, bias";
  let description = [{
    Given `dout` (`[B, Sq, Dv]`, the gradient of the loss with respect to the
    result of a `gt.attention` with the same `query`, `key`, `value`,
    optional `bias`, `mask` and `spatial`, `num_heads` and `scale`),
    computes, with `P = softmax(scale * Q_h K_h^T + bias + spatial +
    mask_bias)` recomputed per head,

    ```
    dV_h = P^T dO_h
    dP   = dO_h V_h^T
    dS   = P * (dP - rowsum(dP * P))
    dQ_h = scale * dS K_h
    dK_h = scale * dS^T Q_h
    dbias = dS summed over the dimensions along which bias was broadcast
    ```

    The results are `dq`, `dk`, `dv` (the types of `query`, `key`, `value`),
    then `bias_grads`: only when a `bias` is present `dbias` (the type of
    `bias`), then only with `spatial(%distance, %table)` `dtable` (the type
    of `table`):
    `dtable[v, h]` is the sum of `dS[b, h, i, j]` over the pairs with
    `clamp(distance[b, i, j], 0, V - 1) = v`, a scatter-add that never
    builds the `[B, H, Sq, Sk]` gradient of the bias.
    Optionally (both or neither) `out` (the forward's result) and `lse` (its
    `[B, H, Sq]` row log-sum-exp, from `gt.attention_lse`): the kernel then
    takes `LSE` and `rowsum(dO * O)` from them instead of a statistics pass
    over the scores. Masked scores and rows that keep no key contribute
    nothing. Lowering calls the
    flash-attention-2 style runtime kernel, which never materializes the
    `[H, Sq, Sk]` probabilities; `keep-attention=false` decomposes it into
    TOSA (the reference). The op is itself not differentiable (no
    second-order gradients).

    ```mlir
    %dq, %dk, %dv, %db = gt.attention_grad %do, %q, %k, %v bias(%b) heads = 8
        : (tensor<2x128x64xf32>, tensor<2x128x64xf32>, tensor<2x128x64xf32>,
           tensor<2x128x64xf32>, tensor<8x128x128xf32>)
        -> (tensor<2x128x64xf32>, tensor<2x128x64xf32>, tensor<2x128x64xf32>,
            tensor<8x128x128xf32>)
    ```
  }];
  let arguments = (ins GT_FloatTensor:$dout, GT_FloatTensor:$query,
                   GT_FloatTensor:$key, GT_FloatTensor:$value,
                   Optional<GT_FloatTensor>:$bias,
                   Optional<GT_MaskTensor>:$mask,
                   Optional<GT_IndexTensor>:$spatial_distance,
                   Optional<GT_FloatTensor>:$spatial_table,
                   Optional<GT_FloatTensor>:$out,
                   Optional<GT_FloatTensor>:$lse,
                   ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                   OptionalAttr<F32Attr>:$scale);
  let results = (outs GT_FloatTensor:$dq, GT_FloatTensor:$dk,
                 GT_FloatTensor:$dv, Variadic<GT_FloatTensor>:$bias_grads);
  let assemblyFormat = [{
    $dout `,` $query `,` $key `,` $value (`bias` `(` $bias^ `)`)?
    (`mask` `(` $mask^ `)`)?
    (`spatial` `(` $spatial_distance^ `,` $spatial_table `)`)?
    (`out` `(` $out^ `)`)? (`lse` `(` $lse^ `)`)?
    `heads` `=` $num_heads attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Size of one head's slice of the hidden dimension.
    int64_t getHeadDim();
    /// The scale applied to Q K^T: the `scale` attribute or 1/sqrt(head_dim).
    double getScaleOrDefault();
    /// The gradient of `bias`, or null without a bias.
    ::mlir::Value getDbias() {
      return getBias() && !getBiasGrads().empty() ? getBiasGrads().front()
                                                  : ::mlir::Value();
    }
    /// The gradient of the spatial table, or null without one.
    ::mlir::Value getDtable() {
      return getSpatialTable() && !getBiasGrads().empty()
                 ? getBiasGrads().back()
                 : ::mlir::Value();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Sparse attention and message passing
//===----------------------------------------------------------------------===//

def GT_SparseAttentionOp : GT_ComputeOp<"sparse_attention", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Multi-head attention restricted to the edges of a graph";
  let description = [{
    Attention where node `i` attends only to its neighbours `j` in the CSR
    graph (`row_ptr` `[N+1]`, `col_idx` `[E]`): per head, scores on the edges
    (SDDMM), an edge softmax per row, and an SpMM with `value`.
    `query` is `[N, D]`, `key`/`value` are `[M, D]`/`[M, Dv]`; the result is
    `[N, Dv]`. The optional `edge_bias` `[E, H]` is added to the edge scores.

    ```mlir
    %o = gt.sparse_attention %q, %k, %v, %rp, %ci heads = 4
        : (tensor<100x64xf32>, tensor<100x64xf32>, tensor<100x64xf32>,
           tensor<101xi64>, tensor<800xi64>) -> tensor<100x64xf32>
    ```
  }];
  let arguments = (ins GT_FloatTensor:$query, GT_FloatTensor:$key,
                   GT_FloatTensor:$value, GT_IndexTensor:$row_ptr,
                   GT_IndexTensor:$col_idx,
                   Optional<GT_FloatTensor>:$edge_bias,
                   ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                   OptionalAttr<F32Attr>:$scale);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $row_ptr `,` $col_idx
    (`edge_bias` `(` $edge_bias^ `)`)? `heads` `=` $num_heads attr-dict `:`
    functional-type(operands, results)
  }];
}

def GT_SpmmOp : GT_ComputeOp<"spmm", [], ["getFlops"], ["buildGradient"]> {
  let summary = "Sparse (CSR) times dense matrix: message passing";
  let description = [{
    `result[i] = sum_{e in row_ptr[i]..row_ptr[i+1]} values[e] * x[col_idx[e]]`
    with `row_ptr` `[N+1]`, `col_idx` and `values` `[E]`, `x` `[M, D]`; the
    result is `[N, D]`. With `values` the normalized adjacency weights this
    is GCN aggregation (the local part of a GraphGPS layer).

    ```mlir
    %y = gt.spmm %rp, %ci, %w, %x : (tensor<101xi64>, tensor<800xi64>,
        tensor<800xf32>, tensor<100x64xf32>) -> tensor<100x64xf32>
    ```
  }];
  let arguments = (ins GT_IndexTensor:$row_ptr, GT_IndexTensor:$col_idx,
                   GT_FloatTensor:$values, GT_FloatTensor:$input);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = [{
    $row_ptr `,` $col_idx `,` $values `,` $input attr-dict `:`
    functional-type(operands, results)
  }];
}

def GT_SpmmLinearOp : GT_ComputeOp<"spmm_linear", [AttrSizedOperandSegments],
    ["getFlops"]> {
  let summary = "Aggregation and transform pipelined over row chunks";
  let description = [{
    MixGCN's mixture of accelerators (gt-mixture-accelerators):
    `aggregate = scale * gt.spmm(row_ptr, col_idx, values, input)` (`scale`
    `[N, 1]` optional, 1 without) and `result = aggregate @ weight (+ bias)`
    with `weight` `[D, F]` and `bias` `[F]`. The runtime cuts the N rows into
    `chunks` chunks and runs the aggregation and the transform on disjoint
    thread groups, chunk i's transform while chunk i+1 is aggregated. Both
    results are returned (the transform's input is kept for the weight's
    gradient). Built after autodiff: no gradient rule.

    ```mlir
    %agg, %y = gt.spmm_linear %rp, %ci, %w, %x, %wt scale(%s) chunks = 4
        : (tensor<101xi64>, tensor<800xi64>, tensor<800xf32>,
           tensor<100x64xf32>, tensor<64x32xf32>, tensor<100x1xf32>)
        -> (tensor<100x64xf32>, tensor<100x32xf32>)
    ```
  }];
  let arguments = (ins GT_IndexTensor:$row_ptr, GT_IndexTensor:$col_idx,
                   GT_FloatTensor:$values, GT_FloatTensor:$input,
                   GT_FloatTensor:$weight, Optional<GT_FloatTensor>:$scale,
                   Optional<GT_FloatTensor>:$bias,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$chunks);
  let results = (outs GT_FloatTensor:$aggregate, GT_FloatTensor:$result);
  let assemblyFormat = [{
    $row_ptr `,` $col_idx `,` $values `,` $input `,` $weight
    (`scale` `(` $scale^ `)`)? (`bias` `(` $bias^ `)`)? `chunks` `=` $chunks
    attr-dict `:` functional-type(operands, results)
  }];
}

def GT_CsrTransposeOp : GT_ComputeOp<"csr_transpose", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Sparsity pattern of a transposed CSR (or COO) matrix";
  let description = [{
    The pattern of the `M x N` transpose of the `N x M` matrix with CSR
    `row_ptr` `[N+1]` and `col_idx` `[E]`, or, without `row_ptr`, of the
    COO pattern where entry `e` is its own row `e` (`N = E`: a scatter into
    the rows `col_idx`). Results: `row_ptr_t` `[M+1]`, `col_idx_t` `[E]`
    (the source row of each entry) and `perm` `[E]` (its position in
    `col_idx`, to permute per-entry values with); the entries of a row keep
    their input order. It turns an edge list into the CSR of `gt.spmm` and
    gives an SpMM's backward its `A^T`. Integer results: no gradient.

    ```mlir
    %rp, %src, %perm = gt.csr_transpose %dst cols = 100
        : (tensor<800xi64>) -> (tensor<101xi64>, tensor<800xi64>,
                                tensor<800xi64>)
    ```
  }];
  let arguments = (ins GT_IndexTensor:$col_idx, Optional<GT_IndexTensor>:$row_ptr,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$num_cols);
  let results = (outs I64Tensor:$row_ptr_t, I64Tensor:$col_idx_t,
                      I64Tensor:$perm);
  let assemblyFormat = [{
    $col_idx (`row_ptr` `(` $row_ptr^ `)`)? `cols` `=` $num_cols attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Graph encodings
//===----------------------------------------------------------------------===//

def GT_SpatialBiasOp : GT_ComputeOp<"spatial_bias", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Per-head attention bias from shortest-path distances";
  let description = [{
    Graphormer's spatial encoding: `result[..., h, i, j] =
    table[clamp(spd[..., i, j], 0, M - 1), h]` for a distance matrix `spd`
    (`[Sq, Sk]` or `[B, Sq, Sk]`; `Sq` may be a row block) and a learned
    table `[M, H]`. The result is `[H, Sq, Sk]` or `[B, H, Sq, Sk]`.
    Distances beyond the table (unreachable pairs) share its last row.

    ```mlir
    %b = gt.spatial_bias %spd, %table
        : (tensor<128x128xi64>, tensor<16x8xf32>) -> tensor<8x128x128xf32>
    ```
  }];
  let arguments = (ins GT_IndexTensor:$distance, GT_FloatTensor:$table);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = [{
    $distance `,` $table attr-dict `:` functional-type(operands, results)
  }];
}

def GT_EdgeBiasOp : GT_ComputeOp<"edge_bias", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Per-head attention bias from edge features along paths";
  let description = [{
    Graphormer's edge encoding. `path` (`[..., Sq, Sk, L]`) holds the edge
    type of the `l`-th edge on a shortest path from `i` to `j` (negative:
    no edge); `distance` (`[..., Sq, Sk]`) the path lengths; `table`
    (`[E, H]`) embeds edge types; `hop_weights` (`[L, H, H]`) mixes heads per
    hop. Then

    ```
    result[..., h, i, j] = sum_{l : path[i,j,l] >= 0}
        (table[path[i,j,l]] @ hop_weights[l])[h] / clamp(distance[i,j], 1, L)
    ```

    ```mlir
    %b = gt.edge_bias %path, %spd, %table, %w
        : (tensor<64x64x4xi64>, tensor<64x64xi64>, tensor<32x8xf32>,
           tensor<4x8x8xf32>) -> tensor<8x64x64xf32>
    ```
  }];
  let arguments = (ins GT_IndexTensor:$path, GT_IndexTensor:$distance,
                   GT_FloatTensor:$table, GT_FloatTensor:$hop_weights);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = [{
    $path `,` $distance `,` $table `,` $hop_weights attr-dict `:`
    functional-type(operands, results)
  }];
}

def GT_DegreeEmbeddingOp : GT_ComputeOp<"degree_embedding", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Centrality encoding: add a degree embedding to node features";
  let description = [{
    `result[..., s, :] = input[..., s, :] + table[clamp(degree[..., s], 0,
    M - 1), :]` with `input` `[..., S, D]`, `degree` `[..., S]` and `table`
    `[M, D]`. Graphormer adds one for in-degree and one for out-degree.

    ```mlir
    %y = gt.degree_embedding %x, %deg, %table : (tensor<2x128x64xf32>,
        tensor<2x128xi64>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
    ```
  }];
  let arguments = (ins GT_FloatTensor:$input, GT_IndexTensor:$degree,
                   GT_FloatTensor:$table);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $degree `,` $table attr-dict `:`
    functional-type(operands, results)
  }];
}

def GT_NodeEmbeddingOp : GT_ComputeOp<"node_embedding", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Embedding lookup of categorical node features";
  let description = [{
    Looks up `table` (`[V, D]`) at every index of `ids`: the result has shape
    `ids.shape + [D]`. With `sum_features`, the last dimension of `ids`
    enumerates several categorical features of a node and is summed out
    (Graphormer's atom encoder): the result is `ids.shape[:-1] + [D]`.

    ```mlir
    %e = gt.node_embedding %ids, %table {sum_features}
        : (tensor<128x9xi64>, tensor<512x64xf32>) -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins GT_IndexTensor:$ids, GT_FloatTensor:$table,
                   UnitAttr:$sum_features);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $table attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Fused dense ops
//===----------------------------------------------------------------------===//

def GT_LayerNormOp : GT_ComputeOp<"layer_norm", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Layer normalization over the trailing dimensions";
  let description = [{
    Normalizes `input` over its trailing `rank(scale)` dimensions (mean 0,
    variance 1, biased variance plus `epsilon`), then multiplies by `scale`
    and adds the optional `bias` (both of the trailing shape).

    ```mlir
    %y = gt.layer_norm %x, %g, %b epsilon = 1.0e-05 : (tensor<2x128x64xf32>,
        tensor<64xf32>, tensor<64xf32>) -> tensor<2x128x64xf32>
    ```
  }];
  let arguments = (ins GT_FloatTensor:$input, GT_FloatTensor:$scale,
                   Optional<GT_FloatTensor>:$bias,
                   DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? `epsilon` `=` $epsilon attr-dict `:`
    functional-type(operands, results)
  }];
}

def GT_LinearOp : GT_ComputeOp<"linear", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Dense layer: input @ weight + bias";
  let description = [{
    `result = input @ weight (+ bias)` with `input` `[..., K]`, `weight`
    `[K, N]` (the ONNX MatMul layout; PyTorch's `[N, K]` weight appears
    transposed) and `bias` `[N]`. The result is `[..., N]`.

    ```mlir
    %y = gt.linear %x, %w, %b : (tensor<2x128x64xf32>, tensor<64x256xf32>,
        tensor<256xf32>) -> tensor<2x128x256xf32>
    ```
  }];
  let arguments = (ins GT_FloatTensor:$input, GT_FloatTensor:$weight,
                   Optional<GT_FloatTensor>:$bias);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def GT_GeluOp : GT_ComputeOp<"gelu", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `x * 0.5 * (1 + erf(x / sqrt(2)))`, or with `tanh` the approximation
    `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.

    ```mlir
    %y = gt.gelu %x : tensor<2x128x256xf32>
    ```
  }];
  let arguments = (ins GT_FloatTensor:$input, UnitAttr:$tanh);
  let results = (outs GT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 0;
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

def GT_CrossEntropyOp : GT_ComputeOp<"cross_entropy", [], ["getFlops"],
    ["buildGradient"]> {
  let summary = "Masked mean softmax cross-entropy";
  let description = [{
    `logits` `[..., C]`, integer `labels` `[...]` in `[0, C)`, optional `i1`
    `mask` `[...]` (only `true` entries count; node classification trains on
    a split of the nodes). The result is the scalar mean over counted
    entries of `-log softmax(logits)[label]`; 0 when none counts.

    ```mlir
    %l = gt.cross_entropy %logits, %labels mask(%m) : (tensor<128x8xf32>,
        tensor<128xi64>, tensor<128xi1>) -> tensor<f32>
    ```
  }];
  let arguments = (ins GT_FloatTensor:$logits, GT_IndexTensor:$labels,
                   Optional<GT_MaskTensor>:$mask);
  let results = (outs 0DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $logits `,` $labels (`mask` `(` $mask^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def GT_LayerOp : GT_Op<"layer", [SingleBlock, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<GT_CostOpInterface,
        ["getFlops", "getBytesMoved", "getActivationBytes",
         "getTransientBytes"]>]> {
  let summary = "One layer of the model: the unit of cost and of staging";
  let description = [{
    Groups the ops of one model layer (an embedding/encoder block, a
    transformer layer, the output head). The body may use values defined
    above; its `gt.yield` gives the layer's results. Pipeline stages are cut
    between `gt.layer`s, and the cost model sums their bodies.

    `index` is the layer's position in the model (unique and increasing
    within a function); `kind` is a free-form tag such as `"embedding"`,
    `"transformer"` or `"head"`.

    ```mlir
    %y = gt.layer index = 1 kind = "transformer" -> tensor<2x128x64xf32> {
      %a = gt.gelu %x : tensor<2x128x64xf32>
      gt.yield %a : tensor<2x128x64xf32>
    }
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$index,
                   OptionalAttr<StrAttr>:$kind);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `index` `=` $index (`kind` `=` $kind^)? (`->` type($results)^)?
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def GT_YieldOp : GT_Op<"yield", [Pure, Terminator, HasParent<"LayerOp">]> {
  let summary = "Returns the results of a gt.layer";
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

#endif // MEGAGRAPH_DIALECT_GT_GTOPS_TD
