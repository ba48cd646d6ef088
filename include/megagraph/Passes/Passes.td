//===- Passes.td - MegaGraph passes -----------------------*- tablegen -*-===//
//
// Part of MegaGraph. Every pass of the compiler, one def each: summary,
// description with a small example, options, statistics. The sources live in
// passes/<Family>/<PassName>.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_PASSES_TD
#define MEGAGRAPH_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def GTRaise : Pass<"gt-raise", "::mlir::ModuleOp"> {
  let summary = "Raise imported tensor ops to gt ops";
  let description = [{
    Recognizes the Graph Transformer building blocks in the upstream ops the
    ONNX importer produces (TOSA, `linalg.softmax`, `ml_program` globals)
    and replaces them with gt ops, so that later passes see attention, its
    bias and the graph embeddings as single ops:

    * scaled dot-product attention, in the forms PyTorch exports
      (hand-written `matmul / sqrt(d) (+ bias) -> softmax -> matmul` with
      heads split by reshape/transpose, `nn.MultiheadAttention`,
      `nn.TransformerEncoderLayer`) -> `gt.attention`. Q, K and V are traced
      back through reshape/transpose chains to their projections, so the
      head count and the batch-first or seq-first layout are recovered;
      scale factors on Q or on the scores fold into `scale`; additive terms
      of the scores (spatial bias, float masks) become the `bias` operand.
      Scores removed by `masked_fill(m, -inf)` or `where(m, s, -inf)` (any
      fill of -1e9 or below), by an additive `where(m, -inf, 0)` (as
      `nn.MultiheadAttention` builds from `key_padding_mask`), possibly on a
      view that splits the batch-head dim (fairseq), become the `mask`
      operand (several are ANDed). torch's `scaled_dot_product_attention`
      decomposition, which zeroes fully masked rows with
      `where(isnan(p), 0, p)`, raises too: gt.attention yields zeros there;
    * an embedding gather indexed by a shortest-path-distance matrix and
      transposed to `[.., H, S, S]` -> `gt.spatial_bias`;
    * an embedding gather added to node features ->
      `gt.degree_embedding`; other embedding gathers (optionally summed over
      a feature axis, of any size, one included) -> `gt.node_embedding`, at
      any batch size;
    * the erf form of GELU -> `gt.gelu`;
    * `matmul` with a parameter weight, `[K, N]` or an `[N, K]` one behind
      a transpose (`Gemm` with `transB = 1`), at any batch size (at batch 1
      there is no reshape around the matmul), + a parameter bias over the
      output features -> `gt.linear`;
    * message passing written as a scatter-add into rows (PyG's
      `zeros.scatter_add(0, dst.expand(..), w * x[src])`, `index_add_`,
      `index_put_(accumulate=True)`: ScatterElements / ScatterND with
      reduction add) of rows gathered from `x` and optionally scaled per
      edge -> `gt.csr_transpose` of the destinations (the CSR, built at run
      time) + `gt.spmm` over `x`: no `N x E` comparison and no gathered
      `E x C` messages remain.

    ONNX `LayerNormalization` (opset 17) is imported as `gt.layer_norm`
    directly; the decomposed form that older opsets export
    (`(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * w + b` over the
    last dim, with parameter `w` and `b`) is raised to it.

    Embedding ops clamp indices where ONNX wraps negative ones; PyTorch
    embeddings reject negative indices, so exported models agree.
    Anything not matched stays as it was; raising never changes results.

    Example:

    ```mlir
    // before
    %0 = tosa.mul %x, %c0_707 ...   %1 = tosa.erf %0   %2 = tosa.add %1, %one
    %3 = tosa.mul %x, %2 ...        %4 = tosa.mul %3, %half
    // after
    %4 = gt.gelu %x : tensor<2x16x64xf32>
    ```
  }];
  let dependentDialects = ["::megagraph::gt::GTDialect",
                           "::mlir::tosa::TosaDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numAttention", "attention", "gt.attention ops formed">,
    Statistic<"numBias", "biases", "bias encoders formed">,
    Statistic<"numEmbedding", "embeddings", "embedding ops formed">,
    Statistic<"numGelu", "gelus", "gt.gelu ops formed">,
    Statistic<"numLinear", "linears", "gt.linear ops formed">,
    Statistic<"numLayerNorm", "layer-norms",
              "gt.layer_norm ops formed from decomposed layer norms">,
    Statistic<"numSpmm", "spmms",
              "gt.spmm ops formed from scatter-add message passing">,
  ];
}

def GTDecompose : Pass<"gt-decompose", "::mlir::ModuleOp"> {
  let summary = "Lower gt ops to TOSA for code generation";
  let description = [{
    Rewrites the gt ops that have a generated-code lowering into TOSA, and
    decomposes `linalg.softmax`, so that the upstream `tosa-to-linalg`
    path, bufferization and the LLVM lowering handle them:

    * `gt.linear` -> `tosa.matmul` (+ `tosa.add`);
    * `gt.layer_norm` -> reductions, `tosa.rsqrt`, scale and shift;
    * `gt.gelu` -> the erf (or tanh) formula;
    * `gt.node_embedding`, `gt.degree_embedding`, `gt.spatial_bias` ->
      `tosa.gather` on clamped indices (+ sum, add or transpose);
    * `gt.attention` stays (it bufferizes into the fused runtime kernel)
      unless `keep-attention=false`, which decomposes it into explicit
      scores, softmax and products: the reference path;
    * an attention with `spatial(%distance, %table)` keeps it for the
      spatial kernels, its distance narrowed once to i16 (saturating: the
      kernels clamp to the table), unless `keep-spatial-bias=false`, the
      reference path or a table of more than 2^15 rows: then it gets back
      the dense bias (one `gt.spatial_bias` per distance and table, plus its
      own bias) and a gradient's `dtable` comes from that op's gradient
      rule.

    A gt op without a CPU lowering (edge_bias, sparse_attention, spmm,
    cross_entropy, layer) is reported as an error.

    Example:

    ```mlir
    // before
    %y = gt.gelu %x : tensor<4xf32>
    // after
    %0 = tosa.mul %x, %c0_7071 ...   %1 = tosa.erf %0   ...   tosa.mul
    ```
  }];
  let options = [
    Option<"keepAttention", "keep-attention", "bool", /*default=*/"true",
           "Keep gt.attention for the fused runtime kernel">,
    Option<"keepSpatialBias", "keep-spatial-bias", "bool",
           /*default=*/"true",
           "Keep attention's spatial operands for the CPU spatial kernels "
           "(false: rebuild the dense bias, as the CUDA kernels need)">,
  ];
  let dependentDialects = ["::mlir::tosa::TosaDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GTApproximateMath : Pass<"gt-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Inline polynomial erf and tanh so that GELU loops vectorize";
  let description = [{
    Rewrites f32 `math.erf` and `math.tanh` into upstream MLIR's polynomial
    approximations (erf: piecewise rational minimax fit, absolute error
    about 2.5e-7; tanh: a rational fit within a few ulp), plain `arith`
    ops. Run in `lower-cpu` before `convert-math-to-libm`: a libm call per
    element keeps LLVM's loop vectorizer off GELU's loops. Other element
    types keep their libm calls.

    ```mlir
    // before
    %y = math.erf %x : f32
    // after: arith.mulf, arith.divf, arith.select, ... (no math.erf)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def GTExportEntries : Pass<"gt-export-entries", "::mlir::ModuleOp"> {
  let summary = "Make @main and the stage entries the runtime's C entries";
  let description = [{
    The first pass of the `lower-cpu` and `lower-cuda` pipelines. For its
    entry table, megagraph-compile --emit=exe has read the model's
    signature from `gt.name` attributes already; the lowering only needs the entry
    points. `@main` becomes `@megagraph_model` (MGRT_MODEL_SYMBOL of
    megagraph/ModelABI.h, since `main` is the executable's own), uses of
    it follow, and it and every function marked `gt.pipeline_entry` get
    `llvm.emit_c_interface`; their argument and result attributes go.

    ```mlir
    // before
    func.func @main(%x: tensor<2xf32> {gt.name = "x"}) -> tensor<2xf32>
    // after
    func.func @megagraph_model(%x: tensor<2xf32>) -> tensor<2xf32>
        attributes {llvm.emit_c_interface}
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def GTSparseAdjacency : Pass<"gt-sparse-adjacency", "::mlir::ModuleOp"> {
  let summary = "Replace a dense normalized adjacency input by an edge list";
  let description = [{
    Kipf & Welling's GCN as users write it, `adj_norm @ (x @ W)`, takes the
    normalized adjacency `D^-1/2 (A + I) D^-1/2` as a dense `[N, N]` input
    (`adj_norm`, role `MGRT_ROLE_ADJ_NORM`). Given the data set's directed
    edge count E (`edges`, megagraph-compile's `--input-shape
    edge_index=2xE`), this pass replaces that input by `edge_index` i64
    `[2, E]` (sources in row 0, targets in row 1, as the driver fills it;
    role `MGRT_ROLE_EDGE_INDEX`) and every product `adj_norm @ H` (a
    `tosa.matmul` whose left operand is `adj_norm`, possibly behind
    reshapes to `[1, N, N]`, and whose right operand is `[1, N, F]`) by the
    same sum over the edges, as PyG's GCNConv computes it: self loops
    appended to the list (the `+ I`), degrees counted from the targets at
    run time, per-edge weights `rsqrt(d_src) * rsqrt(d_dst)`, and one
    `gt.spmm` over the CSR that `gt.csr_transpose` builds from the targets.
    No `[N, N]` (nor `[E, F]`) tensor remains, and the forms are those
    gt-raise gives PyG's GCNConv, so gt-autodiff, `--plan mop=P`, `gp=P`
    and `moa=1` handle them alike. The normalization is built once per
    function and shared by its products.

    Row i aggregates the edges into i (row 1 of `edge_index` is the
    target), `d_i = 1 +` the in-degree of i. For the edge lists the driver
    binds (both directions of every undirected edge, no self loops or
    duplicates: every data set it loads) this is exactly the driver's
    dense `adj_norm` (`normalizedAdjacency`, runtime/driver/Topology.cpp).
    That function symmetrizes a directed pattern and collapses duplicate
    edges and self loops; for such a list the two differ.

    Without `edges` (its default, -1) the pass does nothing. An `adj_norm`
    that is not `f32 [N, N]` or `[1, N, N]`, or that is used other than as
    the left operand of such a product, stays dense, with a warning. A
    model that already has an `edge_index` input, or `edges` = 0, is an
    error. Runs before gt-raise (the `import-to-gt` pipeline's
    `sparse-adjacency-edges` option).

    ```mlir
    // before
    func.func @main(%x: tensor<64x8xf32> {gt.name = "x"},
                    %adj: tensor<64x64xf32> {gt.name = "adj_norm"}) ... {
      %a = tosa.reshape %adj, %s : ... -> tensor<1x64x64xf32>
      %y = tosa.matmul %a, %h, %zp, %zp : (tensor<1x64x64xf32>,
          tensor<1x64x16xf32>, ...) -> tensor<1x64x16xf32>
    // after (edges=256)
    func.func @main(%x: tensor<64x8xf32> {gt.name = "x"},
                    %ei: tensor<2x256xi64> {gt.name = "edge_index"}) ... {
      %rp, %ci, %perm = gt.csr_transpose %dst cols = 64 : (tensor<320xi64>)
          -> (tensor<65xi64>, tensor<320xi64>, tensor<320xi64>)
      %deg = gt.spmm %rp, %ci, %ones, %ones1 : ... -> tensor<64x1xf32>
      ...
      %y2 = gt.spmm %rp, %src, %w, %h2 : (tensor<65xi64>, tensor<320xi32>,
          tensor<320xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
    ```
  }];
  let options = [
    Option<"edges", "edges", "int64_t", /*default=*/"-1",
           "Directed edge count E of the edge_index [2, E] input that "
           "replaces adj_norm (-1: keep adj_norm dense)">
  ];
  let dependentDialects = ["::megagraph::gt::GTDialect",
                           "::mlir::tosa::TosaDialect"];
  let statistics = [
    Statistic<"numProducts", "products",
              "adj_norm products made sparse (gt.spmm)">
  ];
}

def GTFuseSpatialBias : Pass<"gt-fuse-spatial-bias", "::mlir::ModuleOp"> {
  let summary = "Read the spatial bias inside attention instead of building it";
  let description = [{
    Graphormer's spatial encoding `gt.spatial_bias %d, %t` is a `[B, H, Sq,
    Sk]` tensor built from a `[B, Sq, Sk]` distance matrix and a `[V, H]`
    table; its gradient is another one, scattered back to the table. When
    it is the bias of a `gt.attention`, alone or added (`tosa.add`, without
    broadcasting it) to another bias of attention's bias shape, this pass
    gives the attention the distance and table instead
    (`spatial(%d, %t)`, plus the other bias): the kernel adds each table
    entry to its score, and the gradient rule yields the table's gradient
    `dtable` directly (a scatter-add over the distances inside the
    backward), so neither tensor exists. The `gt.spatial_bias` goes when
    nothing else uses it.

    Runs before `gt-autodiff` (the `train` pipeline runs it unless the plan
    has pipeline stages, pp > 1, after `gt-context-parallel` under cp) and in
    `lower-cpu` (inference). An attention whose bias already has a
    `gt.attention_grad` (the gradient was taken with the dense bias) is left
    as it is. A context-parallel attention (`gt.cp`) is rewritten too: its
    distance is the rank's rows `[B, S/cp, S]` (all key columns), which the
    cp kernels read per key block; the table's gradient is this rank's
    part, summed over the group as every replicated parameter's is.

    ```mlir
    // before
    %b = gt.spatial_bias %spd, %t : (tensor<2x64x64xi64>, tensor<9x8xf32>)
        -> tensor<2x8x64x64xf32>
    %o = gt.attention %q, %k, %v bias(%b) heads = 8 : ...
    // after
    %o = gt.attention %q, %k, %v spatial(%spd, %t) heads = 8 : ...
    ```
  }];
  let statistics = [
    Statistic<"numFused", "fused", "attentions given a spatial bias">,
  ];
}

def GTAttentionKeepLse : Pass<"gt-attention-keep-lse", "::mlir::ModuleOp"> {
  let summary = "Give each attention gradient its forward's row log-sum-exp";
  let description = [{
    Runs after autodiff, before bufferization. Each `gt.attention_grad`
    without statistics whose `gt.attention` of the same operands (query,
    key, value, bias, mask, heads, scale) comes earlier in its block gets
    that forward's result and row log-sum-exp as its `out` and `lse`
    operands; the forward becomes a `gt.attention_lse`, which returns the
    log-sum-exp too. The backward kernel then takes the statistics from them
    instead of a pass over the scores. Context-parallel attentions (`gt.cp`)
    and gradients without a forward in their block are left as they are.

    Example:

    ```mlir
    // before
    %o = gt.attention %q, %k, %v heads = 2 : ...
    %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %v heads = 2 : ...
    // after
    %o, %lse = gt.attention_lse %q, %k, %v heads = 2 : ...
    %dq, %dk, %dv = gt.attention_grad %do, %q, %k, %v out(%o) lse(%lse)
        heads = 2 : ...
    ```
  }];
  let statistics = [
    Statistic<"numForwards", "forwards", "attentions that keep their lse">,
    Statistic<"numGradients", "gradients", "attention gradients given lse">,
  ];
}

def GTLinalgToRuntime : Pass<"gt-linalg-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's BLAS matmul for zero-initialized batch matmuls";
  let description = [{
    Runs after bufferization. An f32 `linalg.batch_matmul` on memrefs whose
    output buffer was zero-filled by the `linalg.fill` just before it (the
    form `tosa.matmul` lowers to) becomes a call to the runtime kernel
    `mgrt_matmul_f32` (OpenBLAS sgemm, multithreaded), and the fill is
    erased: `fill(0); C += A B` is exactly `C = A B`. Any other matmul is
    left to generated loops.

    Example:

    ```mlir
    // before
    linalg.fill ins(%zero : f32) outs(%c : memref<8x16x16xf32>)
    linalg.batch_matmul ins(%a, %b : ...) outs(%c : memref<8x16x16xf32>)
    // after
    %0 = memref.cast %c : memref<8x16x16xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
    ...
    call @mgrt_matmul_f32(%0, %1, %2) : (...) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numMatmuls", "matmuls", "batch matmuls sent to the runtime">,
  ];
}

def GTEarlyDealloc : Pass<"gt-early-dealloc", "::mlir::ModuleOp"> {
  let summary = "Free each local buffer right after its last use";
  let description = [{
    Ownership-based buffer deallocation puts every `memref.dealloc` at the
    end of the block owning the buffer, so a straight-line forward pass keeps
    all intermediates alive until it returns. This pass moves the dealloc of
    each `memref.alloc` of the same block to just after the last use of the
    buffer or of any view of it (subview, reshape, cast), so peak memory is
    the largest set of buffers live at once. A buffer used by a terminator
    (returned, branched) or by an op that may return an alias keeps its
    dealloc where it was.

    Example:

    ```mlir
    // before
    %a = memref.alloc() : memref<4xf32>
    linalg.exp ins(%x : ...) outs(%a : ...)
    linalg.add ins(%a, %a : ...) outs(%y : ...)
    ... many more ops ...
    memref.dealloc %a : memref<4xf32>
    // after
    linalg.add ins(%a, %a : ...) outs(%y : ...)
    memref.dealloc %a : memref<4xf32>
    ... many more ops ...
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numMoved", "moved", "deallocations moved earlier">,
  ];
}

def GTPrecision : Pass<"gt-precision", "::mlir::ModuleOp"> {
  let summary = "Run the step's GEMMs and attention in a lower precision";
  let description = [{
    Mixed-precision training (`--precision bf16`), after
    `gt-linalg-to-runtime`: the runtime calls of the GEMMs and of the fused
    attention become their BF16 versions, which take the same float32
    operands, round the GEMM and attention operands to bfloat16 and
    accumulate every product in float32 (megagraph/Runtime.h; on a GPU,
    tensor cores). Everything else is untouched, so the parameters
    (master weights), the optimizer state, the loss, layer norms, softmax
    statistics and the gradients' accumulation stay float32.

    `precision=fp32` leaves the module as it is. Attention calls without a
    BF16 version (context-parallel and sparse attention) are errors naming
    the call.

    Example (precision=bf16):

    ```mlir
    call @mgrt_matmul_f32(%out, %a, %b) : (...) -> ()
    // becomes
    call @mgrt_matmul_bf16_f32(%out, %a, %b) : (...) -> ()
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "fp32 (no change) or bf16">,
  ];
  let statistics = [
    Statistic<"numCalls", "calls", "runtime calls moved to BF16 kernels">,
  ];
}

def GTFuseElementwise : Pass<"gt-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise linalg ops without keeping large tensors alive longer";
  let description = [{
    Upstream's `linalg-fuse-elementwise-ops` (elementwise producer ->
    consumer fusion, reshape propagation, constant folding) with one more
    condition on each fusion: the producer's operands must not outlive it
    across unrelated work. A single-use producer is fused into its consumer
    when its full-size tensor operands that the consumer does not read
    anyway hold no more bytes than its result (a unary op, broadcast or
    constant operands: fusion never grows the live bytes), or when only
    elementwise generics, `tensor.empty`, constants and reshapes lie
    between the two. Otherwise the producer stays a loop of its own and its
    operands die where it runs.

    What this keeps apart: gradients summed as they arrive, from layers far
    apart in the backward pass. gt-autodiff accumulates the gradient of a
    value used by four layers as `((g4 + g3) + g2) + g1`, each add right
    after its gradient exists; fusing the adds into one four-input loop at
    the end kept all four gradients alive through three layers.

    Example:

    ```mlir
    %s = linalg.generic {add} ins(%g4, %g3) ...   // 2 x 1 GiB in, 1 GiB out
    %x = gt.attention_grad ...                     // not elementwise
    %t = linalg.generic {add} ins(%s, %g2) ...
    // upstream: one generic ins(%g4, %g3, %g2) at %t's place; here: unchanged
    ```
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numKept", "kept-apart",
              "elementwise fusions refused to keep live ranges short">,
  ];
}

def GTMemoryPlan : Pass<"gt-memory-plan", "::mlir::ModuleOp"> {
  let summary = "Place a function's local buffers in one arena by liveness";
  let description = [{
    Runs on buffers, after `gt-early-dealloc` (each buffer is allocated
    where it is first written and freed after its last use). Every
    `memref.alloc` of static shape and identity layout in a function's body
    block whose single `memref.dealloc` is in the same block becomes a
    `memref.view` of one arena at a constant byte offset; the alloc-to-
    dealloc spans of two buffers that share bytes never overlap. Offsets are
    chosen greedily by size (largest first, lowest aligned offset that is
    free for the buffer's whole span), as TensorFlow Lite's arena planner
    does. The arena is allocated right before the first planned buffer
    and freed right after the last one's free (what the function allocates
    before or after them, in a nested region for instance, does not stack
    on it): one allocation per call, of the same size every call, which
    the runtime's block cache hands back each step, so a steady-state step
    neither maps nor faults in memory, and its peak is the plan's.

    Buffers that are returned, freed in another block, of dynamic shape, or
    in nested regions keep their own allocation.

    Example:

    ```mlir
    // before
    %a = memref.alloc() : memref<1024xf32>
    ... uses of %a ...
    memref.dealloc %a : memref<1024xf32>
    %b = memref.alloc() : memref<512xf32>
    ... uses of %b ...
    memref.dealloc %b : memref<512xf32>
    // after: %a and %b share the first bytes of the arena
    %arena = memref.alloc() {alignment = 64 : i64} : memref<4096xi8>
    %a = memref.view %arena[%c0][] : memref<4096xi8> to memref<1024xf32>
    ... uses of %a ...
    %b = memref.view %arena[%c0][] : memref<4096xi8> to memref<512xf32>
    ... uses of %b ...
    memref.dealloc %arena : memref<4096xi8>
    ```
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every buffer in the arena">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numBuffers", "buffers", "buffers placed in arenas">,
    Statistic<"numArenaBytes", "arena-bytes", "bytes of all arenas">,
  ];
}

def GTParallelToRuntime : Pass<"gt-parallel-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Run large scf.parallel loop nests on the runtime's thread pool";
  let description = [{
    Runs on buffers, after `convert-linalg-to-parallel-loops`. Each outermost
    `scf.parallel` without reductions whose work (iterations times the ops
    of its body, nested loops included) reaches `min-work` is outlined into
    a function `@<parent>_loop<N>(ctx: !llvm.ptr, begin: index, end:
    index)` and replaced by one call of the runtime's
    `mgrt_parallel_for(@<parent>_loop<N>, ctx, n, grain)`, which hands
    disjoint ranges of `[0, n)` to the pool's workers
    (`MEGAGRAPH_NUM_THREADS`). `n` counts the iterations of the leading
    parallel dimensions (the fewest that give at least 64, never the
    innermost unless it is the only one); the outlined function walks its
    range of them and runs the remaining dimensions as an inner
    `scf.parallel`, so the innermost loop stays a plain, vectorizable loop.

    Only dimensions that `scf.parallel` declares independent are split, and
    every iteration runs the same code whichever worker runs it, so results
    are bitwise identical for any thread count; reductions (`scf.reduce`
    with operands, and the `scf.for` loops linalg emits for reduction
    dimensions) stay sequential inside one iteration. A body that calls a
    function stays where it is.

    The values the body uses from outside are passed in a stack record:
    `ctx` points to an `!llvm.struct` of their LLVM types (memref
    descriptors, integers, floats; `index` as i64), written before the
    call; `builtin.unrealized_conversion_cast` bridges memref and
    descriptor until the LLVM conversion folds the pairs. Constants and
    `memref.get_global` are cloned into the outlined function instead, so
    LLVM still sees constant bounds.

    Example:

    ```mlir
    // before
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4096, %c128) step (%c1, %c1) {
      %x = memref.load %in[%i, %j] : memref<4096x128xf32>
      %y = math.exp %x : f32
      memref.store %y, %out[%i, %j] : memref<4096x128xf32>
    }
    // after
    %ctx = llvm.alloca %c1 x !llvm.struct<(struct<(ptr, ptr, i64, ...)>, ...)>
    ... llvm.store of the descriptors of %in and %out ...
    %f = constant @f_loop0 : (!llvm.ptr, index, index) -> ()
    call @mgrt_parallel_for(%f, %ctx, %c4096, %c1) : ...
    ```
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "Smallest work (innermost iterations times body ops) that is "
           "dispatched to the thread pool">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numOutlined", "outlined", "loop nests run on the thread pool">,
  ];
}

def GTGpuOffload : Pass<"gt-gpu-offload", "::mlir::ModuleOp"> {
  let summary = "Run every loop nest of the bufferized step as a GPU kernel";
  let description = [{
    The device half of `--target cuda`, after bufferization (memrefs) and
    `gt-linalg-to-runtime`. Every buffer of the step lives in device memory,
    so the host may only launch work, never touch elements:

    * runtime calls become their versions on device buffers, with the same
      operands: `mgrt_matmul_f32` -> `mgrt_cuda_matmul_f32` on cuBLAS,
      `mgrt_attention_f32` / `_bwd_f32` -> the fused flash attention of
      runtime/cuda, `mgrt_cp_attention_f32` / `_bwd_f32` -> its
      context-parallel version (keys over NCCL), and the collectives of
      dp / cp / pp plans `mgrt_comm_<op>_f32` -> `mgrt_comm_device_<op>_f32`
      (the communication runtime's NCCL backend); calls that have no
      device version yet (sparse attention, SpMM) are errors naming the
      call. With `emulate-on-host` every call stays the host one;
    * `memref.copy` becomes `linalg.copy`, and each linalg op on memrefs
      becomes parallel loops (reduction dimensions stay sequential loops
      inside one thread);
    * each host-level loop nest becomes one `gpu.launch`: its loops are
      interchanged so that the parallel ones come first (each thread still
      reduces in the original order), the parallel dimensions are
      flattened into one index over blocks of `block-size` threads
      (row-major, so neighbouring threads touch neighbouring elements); an
      op without parallel loops runs on one thread;
    * a chain of elementwise ops (all loops parallel) over the same static
      iteration space, with nothing between them that touches memory,
      becomes one `gpu.launch` whose threads run every op of the chain at
      their point, in order, when each buffer one op writes and another
      accesses is the same buffer through the same one-to-one indexing
      (so no thread reads what another writes); the intermediate buffers
      stay, but each chain is one kernel launch (`linalg-fuse-elementwise-ops`
      already merged the single-use producers before bufferization);
    * the names and byte sizes of the module's `memref.global`s are kept in
      the module attribute `gt.device_globals = #gt.device_globals<globals
      = [...], bytes = [...]>` for `gt-gpu-device-memory`.

    Afterwards no host-level op reads or writes a buffer's elements; one
    that would (a `memref.load` outside any loop) is an error.

    Example:

    ```mlir
    // before
    linalg.generic {... ["parallel", "parallel"]} ins(%a : memref<64x128xf32>)
        outs(%b : memref<64x128xf32>) { math.exp ... }
    // after
    gpu.launch blocks(%bx, ...) in (%gx = %c32, ...) threads(%tx, ...) in
        (%c256, ...) {
      %i = ... %bx * 256 + %tx ...
      scf.if %i < 8192 { %r = %i / 128  %c = %i % 128  ... math.exp ... }
      gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the generated kernels">,
    Option<"emulateOnHost", "emulate-on-host", "bool", /*default=*/"false",
           "Testing: keep the CPU runtime calls and run each launch as host "
           "loops over its blocks and threads (the kernels' indexing runs "
           "on a machine without a GPU)">,
  ];
  let dependentDialects = ["::megagraph::gt::GTDialect", "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numKernels", "kernels", "gpu.launch ops created">,
    Statistic<"numSerial", "serial-kernels",
              "loop nests launched on a single thread">,
    Statistic<"numInterchanged", "interchanged",
              "ops whose parallel loops were moved before their reductions">,
    Statistic<"numCalls", "runtime-calls", "runtime calls retargeted to CUDA">,
    Statistic<"numFused", "fused", "linalg ops fused into the kernel of the "
              "op before them">,
  ];
}

def GTStageGlobals : Pass<"gt-stage-globals", "::mlir::ModuleOp"> {
  let summary = "Give each pipeline rank storage for its own stage's globals";
  let description = [{
    On the LLVM dialect of a host program whose `gt.plan` has pp > 1 (one
    module for every rank, each rank running its stage's entries): in every
    function, the address of a mutable global (parameters, ZeRO shards,
    optimizer moments, counters) is replaced by
    `mgrt_stage_global(host_address, bytes)`, the runtime's storage for it,
    a copy of its initial bytes made on the first use in this process. So a
    rank materialises only the globals its own stage's entries use, instead
    of every stage's state; the static globals keep the initial values.
    Without pp the module is unchanged. A mutable global without storage in
    the module is an error.

    Example:

    ```mlir
    // before
    %0 = llvm.mlir.addressof @w : !llvm.ptr
    // after
    %0 = llvm.mlir.addressof @w : !llvm.ptr
    %c = llvm.mlir.constant(4096 : i64) : i64
    %1 = llvm.call @mgrt_stage_global(%0, %c) : (!llvm.ptr, i64) -> !llvm.ptr
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numGlobals", "globals", "global addresses given stage storage">,
  ];
}

def GTGpuDeviceMemory : Pass<"gt-gpu-device-memory", "::mlir::ModuleOp"> {
  let summary = "Put the host code's buffers and globals in device memory";
  let description = [{
    The host half of `--target cuda`, on the LLVM dialect (after
    `finalize-memref-to-llvm{use-generic-functions}` and `gpu-to-llvm`):

    * `_mlir_memref_to_llvm_alloc` / `_aligned_alloc` / `_free` become
      `mgrt_cuda_memref_alloc` / `_aligned_alloc` / `_free`, which
      `cudaMalloc` through the runtime's tracked device allocator;
    * in every host function, the address of a global listed in
      `gt.device_globals` (parameters, optimizer state, constants) is
      replaced by `mgrt_cuda_global(host_address, bytes)`: the device copy,
      made on first use and kept (parameters are updated there).

    Example:

    ```mlir
    // before
    %0 = llvm.mlir.addressof @w : !llvm.ptr
    // after
    %0 = llvm.mlir.addressof @w : !llvm.ptr
    %c = llvm.mlir.constant(4096 : i64) : i64
    %1 = llvm.call @mgrt_cuda_global(%0, %c) : (!llvm.ptr, i64) -> !llvm.ptr
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numGlobals", "globals", "global addresses moved to the device">,
  ];
}

def GTAutodiff : Pass<"gt-autodiff", "::mlir::ModuleOp"> {
  let summary = "Build the gradient function of @main (reverse mode)";
  let description = [{
    Adds `@main_grad(inputs..., labels, label_mask) -> (loss, grads...)`:
    a copy of `@main`, the masked mean cross-entropy (`gt.cross_entropy`)
    of output `output`, and a reverse sweep over every op on a path from a
    parameter (`ml_program.global_load` of a `gt.param` global) to the loss.
    Each op builds its operand gradients through `GradientOpInterface`
    (implemented by gt ops; attached to TOSA ops by external models);
    fan-out accumulates with `tosa.add`. Results are the loss, the number of
    correctly classified counted items (`correct`, for the accuracy log),
    and one gradient per parameter, named `grad:<parameter>` (`gt.name`). An op
    without a rule on such a path is an error naming it.

    `loss` picks the loss of the prediction `p` (`[..., C]`, items `[...]`),
    always the mean over the items `label_mask` counts (0 when none does),
    as `torch.nn.functional.<loss>(p[mask], labels[mask])` with
    `reduction='mean'`:

    * `cross_entropy` (`gt.cross_entropy`) and `nll` (`p` holds
      log-probabilities: the mean of `-p[label]`) take int64 class labels
      `[...]` and also return `correct` and `eval_correct` (argmax of `p`),
      counted over the f32 `eval_mask` argument.
    * `mse`, `l1` and `bce_with_logits` (`max(p, 0) - p * y +
      log(1 + exp(-|p|))`) take float labels with `p`'s full shape `[..., C]`
      and divide the masked sum by `count * C`. They have no accuracy
      metric: the function returns the loss and the gradients only, and
      takes no `eval_mask`.

    These are built from TOSA ops, so the existing gradient rules
    differentiate them; the data-parallel weighting by the `label_mask`
    count and the context-parallel loss seed apply unchanged.

    Inputs of @main marked `gt.differentiable` (pipeline stage inputs) also
    get gradients, returned as `d<name>` after the counts and before the
    parameter gradients. With `cotangents` (non-last pipeline stages) there
    is no loss: `@main_grad(inputs..., d<result>...) -> (d<input>...,
    grad:<param>...)` is the vector-Jacobian product of @main with the
    cotangents `d<result>` (one per float result).

    With `seed-input` (a pipeline's last stage) the sweep starts from a
    0-d f32 argument `loss_seed`, appended after the labels and masks,
    instead of 1 (or the context-parallel seed): the driver passes each
    micro-batch's share of the global labelled count.

    With `replace-main`, the gradient function replaces `@main` (used by
    `megagraph-compile --gradients` to build gradient-checking
    executables).

    Example:

    ```mlir
    // before
    func.func @main(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
      %w = ml_program.global_load @w : tensor<8x3xf32>
      %y = gt.linear %x, %w : ...
      return %y : tensor<4x3xf32>
    }
    // after: also
    func.func @main_grad(%x: tensor<4x8xf32>, %labels: tensor<4xi64>,
                         %mask: tensor<4xi1>) -> (tensor<f32>, tensor<8x3xf32>)
    ```
  }];
  let options = [
    Option<"output", "output", "unsigned", /*default=*/"0",
           "Which result of @main the loss applies to">,
    Option<"outputName", "output-name", "std::string", /*default=*/"\"\"",
           "The result of @main the loss applies to, by its gt.name "
           "(overrides `output`)">,
    Option<"loss", "loss", "std::string", /*default=*/"\"cross_entropy\"",
           "cross_entropy, nll, mse, l1 or bce_with_logits">,
    Option<"replaceMain", "replace-main", "bool", /*default=*/"false",
           "Replace @main by the gradient function">,
    Option<"cotangents", "cotangents", "bool", /*default=*/"false",
           "Pipeline stages: seed the sweep with one cotangent argument "
           "per result (d<result>) instead of a loss; no labels">,
    Option<"seedInput", "seed-input", "bool", /*default=*/"false",
           "Seed the loss gradient with an argument `loss_seed` (a 0-d "
           "f32 the caller passes) instead of 1">,
  ];
  let dependentDialects = ["::megagraph::gt::GTDialect",
                           "::mlir::tosa::TosaDialect"];
}

/// The training recipe's options, shared by gt-optimizer and
/// gt-pipeline-train (which runs gt-optimizer on every stage's update).
defvar GTOptimizerRecipeOptions = [
  Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
         "sgd, adam or adamw">,
  Option<"learningRate", "lr", "double", /*default=*/"1e-3",
         "Peak learning rate (the schedule's factor multiplies it)">,
  Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
         "Weight decay: added to the gradient (L2) for sgd and adam, "
         "decoupled for adamw">,
  Option<"momentum", "momentum", "double", /*default=*/"0.0",
         "sgd: momentum factor in [0, 1)">,
  Option<"dampening", "dampening", "double", /*default=*/"0.0",
         "sgd: dampening of the momentum, in [0, 1]">,
  Option<"nesterov", "nesterov", "bool", /*default=*/"false",
         "sgd: Nesterov momentum (needs momentum > 0, dampening 0)">,
  Option<"beta1", "beta1", "double", /*default=*/"0.9",
         "adam/adamw: first-moment decay in [0, 1)">,
  Option<"beta2", "beta2", "double", /*default=*/"0.999",
         "adam/adamw: second-moment decay in [0, 1)">,
  Option<"epsilon", "eps", "double", /*default=*/"1e-8",
         "adam/adamw: denominator epsilon (positive)">,
  Option<"lrSchedule", "lr-schedule", "std::string",
         /*default=*/"\"constant\"",
         "constant, linear, cosine or polynomial (after linear warmup)">,
  Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
         "Steps of linear warmup from 0 to lr">,
  Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
         "Step at which the decay ends (linear, cosine, polynomial)">,
  Option<"minLr", "min-lr", "double", /*default=*/"0.0",
         "Learning rate at the end of the decay (cosine, polynomial)">,
  Option<"power", "power", "double", /*default=*/"1.0",
         "polynomial: exponent of the decay (positive)">,
  Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
         "Scale the gradients to a global 2-norm of at most this (0: off)">,
];

def GTRecompute : Pass<"gt-recompute", "::mlir::ModuleOp"> {
  let summary = "Activation recomputation inside a training step";
  let description = [{
    Activation checkpointing for a step that runs its forward and backward
    in one function: `@main_grad` as gt-autodiff builds it from `@main` (a
    clone of @main's ops, then the loss and the reverse sweep). The
    forward is cut into the units of megagraph/Passes/ForwardUnits.h (the
    pipeline split's: each attention and FFN half of a pre-LN layer). The
    values crossing a cut point are the checkpoints, kept from the forward
    to the backward as before. The values inside a unit that the backward
    reads are recomputed instead: the unit's ops are cloned right before
    the first backward op that reads one of them, and the backward reads
    the clones, so the forward's copies die inside the forward. The last
    unit is not recomputed (the backward starts with it).

    The clone reads the unit's inputs through
    `bufferization.alloc_tensor copy(...)`, an allocation that CSE never
    merges, so that canonicalization and CSE cannot fold the recomputation
    back into the forward. A function without cut points, or whose forward
    region does not match @main, is left as is (the latter with an error).

    Example (two units, `%h` is the checkpoint):

    ```mlir
    // before: the backward reads %a, computed in the forward
    %a = gt.linear %x, %w1 ...   %h = gt.gelu %a ...   %y = gt.linear %h ...
    ... loss, backward of the second unit ...
    %d = gt.gelu_grad %dh, %a ...
    // after
    %x2 = bufferization.alloc_tensor() copy(%x) ...
    %a2 = gt.linear %x2, %w1 ...
    %d = gt.gelu_grad %dh, %a2 ...
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main_grad\"",
           "The step function whose forward region is recomputed">,
    Option<"forward", "forward", "std::string", /*default=*/"\"main\"",
           "The forward function it was built from">,
  ];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
  let statistics = [
    Statistic<"numUnits", "units", "units recomputed">,
    Statistic<"numCloned", "ops", "ops recomputed">,
  ];
}

def GTOptimizer : Pass<"gt-optimizer", "::mlir::ModuleOp"> {
  let summary = "Turn the gradient function into a training step";
  let description = [{
    Consumes `@main_grad` from gt-autodiff: every `grad:<param>` result
    updates its parameter global in place (`ml_program.global_store`) and
    the function, renamed `@main`, returns only the loss and the correct
    count. The forward `@main` is removed. The update of step k (from 1)
    is the one of the same recipe in PyTorch 1.13, `torch.optim` with
    `torch.optim.lr_scheduler.LambdaLR` stepped after every optimizer step
    and `torch.nn.utils.clip_grad_norm_` before it:

    * `sgd` (`torch.optim.SGD`): `g += weight_decay * w`; with momentum,
      `buf = g` at step 1, then `buf = momentum * buf + (1 - dampening) * g`
      (global `<param>.momentum_buffer`), and `g = buf`, or
      `g += momentum * buf` with `nesterov`; `w -= lr_k * g`.
    * `adam` (`torch.optim.Adam`): `g += weight_decay * w`, then
      `m = beta1 m + (1 - beta1) g`, `v = beta2 v + (1 - beta2) g^2`
      (globals `<param>.adam_m`, `<param>.adam_v`),
      `w -= lr_k * mhat / (sqrt(vhat) + eps)` with the bias-corrected
      `mhat = m / (1 - beta1^k)`, `vhat = v / (1 - beta2^k)`.
    * `adamw` (`torch.optim.AdamW`): the same moments on `g`, decoupled
      decay: `w -= lr_k * (mhat / (sqrt(vhat) + eps) + weight_decay * w)`.

    `lr_k = lr * f(k - 1)`, computed in the step from the step counter
    global `gt.step` (the number of steps done, incremented by each step),
    with warmup `W` and total `T` steps, `f(s) = s / max(1, W)` for `s < W`
    and otherwise, with `p = (s - W) / max(1, T - W)` and `r = min-lr / lr`,
    the Hugging Face `transformers` schedules:

    * `constant`: 1 (`get_constant_schedule_with_warmup`);
    * `linear`: `max(0, 1 - p)` (`get_linear_schedule_with_warmup`);
    * `cosine`: `max(0, r + (1 - r) * 0.5 * (1 + cos(pi * p)))`
      (`get_cosine_schedule_with_warmup` for `min-lr` 0, else
      `get_cosine_with_min_lr_schedule_with_warmup`; not clamped after T);
    * `polynomial`: `r + (1 - r) * (1 - min(p, 1))^power`
      (`get_polynomial_decay_schedule_with_warmup` with `lr_end = min-lr`).

    `clip-grad-norm=c` first scales every gradient by
    `min(1, c / (||g||_2 + 1e-6))`, the 2-norm over all the parameters'
    gradients (`torch.nn.utils.clip_grad_norm_`). Gradients of a ZeRO
    shard or of one pipeline stage are only part of the norm, so clipping
    is refused under a `gt.plan` with `zero >= 1` or `pp > 1`.

    Every store comes after the last read of any state (see the pass's
    file comment). The module records the recipe in `gt.training`.

    Parameters of fewer than `pack-below` elements (biases, norm scales)
    are updated in groups of up to `pack-below` elements: the weights,
    gradients and states of a group are flattened and concatenated, the
    recipe runs once on the flat tensors (after elementwise fusion, one
    loop) and each result is sliced back into its parameter's global. The
    recipe is elementwise, so each element is computed as it would be on
    its own parameter; the states stay one global per parameter.

    Example:

    ```mlir
    // before: @main_grad(...) -> (loss, correct, grad:w)
    // after:  @main(...) -> (loss, correct), with
    %w = ml_program.global_load @w ...
    %w2 = tosa.sub %w, %step ...
    ml_program.global_store @w = %w2 ...
    ```
  }];
  let options = !listconcat(GTOptimizerRecipeOptions, [
    Option<"returnState", "return-state", "bool", /*default=*/"false",
           "Testing: also return every gradient (grad:<param>) and every "
           "global the step stores, read back after the step "
           "(state:<global>)">,
    Option<"packBelow", "pack-below", "int64_t",
           /*default=*/"::megagraph::kOptimizerPackElements",
           "Parameters of fewer elements are updated in groups of up to "
           "this many elements, each as one flat tensor (one loop); 0 or 1: "
           "every parameter on its own">,
  ]);
  let dependentDialects = ["::mlir::ml_program::MLProgramDialect",
                           "::mlir::tosa::TosaDialect"];
  let statistics = [
    Statistic<"numUpdated", "parameters", "parameters updated per step">,
    Statistic<"numPacked", "packed",
              "parameters updated in a group of several">,
  ];
}

def GTSetPlan : Pass<"gt-set-plan", "::mlir::ModuleOp"> {
  let summary = "Attach the parallel plan to the module as #gt.plan";
  let description = [{
    The first pass of the `train` pipeline: parses `plan` (megagraph-compile's
    `--plan` syntax, e.g. `dp=2,zero=1`) and sets the module's `gt.plan`
    attribute, which the later passes and the entry table read. An empty
    `plan` is the one-process plan.

    ```mlir
    // gt-set-plan{plan="dp=2,zero=1"}
    module attributes {gt.plan = #gt.plan<dp = 2, zero = 1>} { ... }
    ```
  }];
  let options = [
    Option<"plan", "plan", "std::string", /*default=*/"\"\"",
           "The plan in --plan syntax (\"dp=2,pp=2,mb=4\")">,
  ];
  // #gt.plan needs the gt dialect, also in a module without gt ops.
  let dependentDialects = ["::megagraph::gt::GTDialect"];
}

def GTDataParallel : Pass<"gt-data-parallel", "::mlir::ModuleOp"> {
  let summary = "Average the training step's gradients over the dp group";
  let description = [{
    Data parallelism on the gradient function `@main_grad` of gt-autodiff
    (run before gt-optimizer): each of the `dp` ranks computes the loss and
    the gradients of its share of the global batch, and this pass makes
    every rank see the gradients of the whole global batch, so the replicas
    stay identical and reproduce a one-process run.

    The loss is a masked mean, so rank r's gradient is weighted by its
    count of labelled items `n_r` (the sum of `label_mask`; 1 without it):
    `g = sum_r n_r g_r / sum_r n_r`, and likewise the returned loss; the
    `correct` and `eval_correct` counts are summed. `n_r`, `n_r * loss_r`,
    the counts and every
    `n_r * g_r` are flattened and packed into buckets of at most
    `bucket-bytes` (small gradients share one all-reduce; a gradient at
    least that large gets its own), each reduced by one `shard.all_reduce`
    (sum) over axis 0 of the grid `@gt_dp` (shape = dp), then sliced back
    and divided by `sum_r n_r`. The gradients are packed in the order the
    backward produces them, and each bucket's all-reduce is placed right
    after its last gradient and marked `gt.overlap`, so that it moves while
    the backward goes on (gt-shard-to-runtime).

    The module also gets `func.func @megagraph_plan_dp() -> i64` returning
    dp (a record for tools; the driver reads the plan from the entry
    table's `mgrt_plan`, megagraph/ModelABI.h) and, without one, a
    `#gt.plan` attribute. gt-shard-to-runtime lowers the collectives to runtime calls.
    `dp = 1` leaves the module unchanged.

    With `zero=1` (ZeRO stage 1, optimizer state sharded) the gradient
    buckets (padded to a multiple of dp) are reduce-scattered instead: each
    rank gets the global gradient of its 1/dp shard of the bucket, which
    replaces the bucket's `grad:<param>` results as `grad:gt.zero.bucket<k>`,
    the gradient of a new global `@gt.zero.bucket<k>` (its shard of the
    packed parameters; its `#gt.zero_shard<params, sizes, padded>` lists
    them). gt-optimizer
    then keeps the moments at shard size, and gt-zero-gather turns the
    shard global back into the parameters. `zero=2` (sharded gradients)
    reduce-scatters the gradients inside the backward, one bucket per
    layer: the gradients in the order the backward produces them, a new
    bucket at each weight matrix (rank >= 2; the vectors produced after it
    join it), each bucket packed and reduce-scattered right after its last
    gradient, so its full-size gradients die there. `zero=3` buckets as
    `zero=2` and is recorded in `gt.plan` for gt-zero-gather.

    With `pp > 1` (gt-pipeline-train runs the pass on each stage's update)
    the grid is `@gt_dp(shape = dp x pp)` and the collectives run over its
    axis 0, the replicas of the rank's stage; with `cp > 1` as well it is
    `dp x pp x cp` and they run over axes 0 and 2 (the stage's replicas and
    their cp ranks, dp x cp shards); the stages share the grid (a
    grid of that shape already in the module is kept), and their buckets
    are named after `bucket-prefix` so that their shard globals and
    moments stay apart.

    Example (dp = 2, one small gradient):

    ```mlir
    // before
    return %loss, %correct, %gw : tensor<f32>, tensor<f32>, tensor<8x3xf32>
    // after
    shard.grid @gt_dp(shape = 2)
    %b = tosa.concat %n, %nloss, %correct, %ngw {axis = 0 : i32} ...
    %s = shard.all_reduce %b on @gt_dp grid_axes = [0] : tensor<27xf32> -> tensor<27xf32>
    ... slices divided by the global count ...
    ```
  }];
  let options = [
    Option<"dp", "dp", "int64_t", /*default=*/"1",
           "Number of data-parallel ranks">,
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"::megagraph::kGradientBucketBytes",
           "Largest all-reduce bucket packing several gradients (bytes)">,
    Option<"presummed", "presummed", "bool", /*default=*/"false",
           "The gradients are already weighted by n_r / N (gt-context-"
           "parallel's loss seed): sum them without weighting">,
    Option<"zero", "zero", "int64_t", /*default=*/"0",
           "ZeRO stage: 0 (all-reduce), 1 or 2 (reduce-scatter, sharded "
           "optimizer state and gradients; run gt-zero-gather after "
           "gt-optimizer) or 3 (also sharded parameters, in gt-zero-gather)">,
    Option<"pp", "pp", "int64_t", /*default=*/"1",
           "Pipeline stages: the grid is dp x pp, reduced over axis 0">,
    Option<"cp", "cp", "int64_t", /*default=*/"1",
           "Context-parallel ranks of each replica: with pp > 1 the grid "
           "is dp x pp x cp, reduced over axes 0 and 2 (else dp * cp)">,
    Option<"bucketPrefix", "bucket-prefix", "std::string",
           /*default=*/"\"gt.zero.bucket\"",
           "Name prefix of the ZeRO shard globals (`<prefix><k>`)">,
  ];
  let dependentDialects = ["::megagraph::gt::GTDialect", "::mlir::shard::ShardDialect",
                           "::mlir::tosa::TosaDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numBuckets", "buckets", "all-reduces per step">,
    Statistic<"numGradients", "gradients", "gradients averaged">,
  ];
}

def GTContextParallel : Pass<"gt-context-parallel", "::mlir::ModuleOp"> {
  let summary = "Shard the node dimension of the forward @main over a cp group";
  let description = [{
    Context parallelism on the forward `@main` (after gt-raise,
    before gt-autodiff): every value that carries the node (row) dimension S
    of a sequence gets S / cp rows; the attention bias keeps all S key
    columns (`[B|1, H|1, S/cp, S]`). The node dimension is found by
    propagation from `gt.attention` (q, k, v and the result: dim 1; bias:
    dim 2) through the row-local ops (gt.linear, gt.layer_norm, gt.gelu,
    gt.degree_embedding, gt.node_embedding, gt.spatial_bias, elementwise
    TOSA, tosa.transpose, tosa.reshape keeping the node index the major
    part of one dimension, row-keeping tosa.slice, the rows of tosa.matmul)
    to the function arguments ([B, S, ...] only) and results. An op that
    touches a sharded value but is not row-local is an error. Each `gt.attention`
    gets `gt.cp = #gt.cp<size, mode, grid, axes>`: bufferization then calls
    `mgrt_cp_attention_f32` (and, through gt-autodiff, `_bwd_f32`) over the
    cp axis of the grid dp x cp, which all-gathers K / V (mode allgather),
    passes them around a ring (mode ring), or (mode ulysses) moves q, k, v
    and the bias from rows to heads by all-to-all, attends over all S rows
    of H / cp heads and moves the output back: cp must divide the heads of
    every attention. The bias is sent only by ulysses.
    The module gets `func.func @megagraph_plan_cp() -> i64` (a record for
    tools; the driver reads the entry table's `mgrt_plan`).
    The loss and gradient reduction over dp x cp is gt-data-parallel's
    (weighted by the labelled rows of each rank).
  }];
  let options = [
    Option<"cp", "cp", "int64_t", /*default=*/"1",
           "Number of context-parallel ranks (must divide S)">,
    Option<"dp", "dp", "int64_t", /*default=*/"1",
           "Number of data-parallel ranks (grid dp x cp, cp innermost)">,
    Option<"pp", "pp", "int64_t", /*default=*/"1",
           "Pipeline stages (run before gt-pipeline-split): the grid is "
           "dp x pp x cp, and the pipeline's last stage seeds the loss "
           "gradient from the driver (no gt.cp_seed)">,
    Option<"mode", "mode", "std::string", /*default=*/"\"allgather\"",
           "How keys reach the queries: allgather, ring or ulysses">,
  ];
  let dependentDialects = ["::megagraph::gt::GTDialect", "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::tosa::TosaDialect"];
  let statistics = [
    Statistic<"numSharded", "sharded-values", "values with S / cp rows">,
    Statistic<"numAttention", "attention-ops", "context-parallel attentions">,
  ];
}

def GTMixtureParallel : Pass<"gt-mixture-parallel", "::mlir::ModuleOp"> {
  let summary = "Split a full graph's nodes over P ranks: aggregations "
                "feature-parallel, transforms node-parallel (MixGCN's MoP)";
  let description = [{
    Mixture of parallelism (MixGCN) on the forward `@main` of a full-graph
    model (an input `x [N, F]`; after gt-raise, before gt-autodiff). The
    dense transforms (gt.linear, tosa.matmul), reductions over features and
    the results run node-parallel: N / P rows, all columns. The sparse
    aggregations (gt.spmm over node values) run feature-parallel: every rank
    has the whole CSR (the graph part of the model is not split) and all N
    rows of F' / P columns (F' = F rounded up to a multiple of P; zero
    columns pad it), so they need no communication. Elementwise ops take
    their operands' layout. Where a value meets an op of the other layout,
    one `shard.all_to_all` over the grid `@gt_mop` (shape P) switches it:
    rows -> columns splits the feature axis and concatenates the node axis,
    columns -> rows the reverse, each moving (P - 1) / P of the value. Its
    gradient is the inverse all-to-all, so the backward switches at the
    same places. Values every rank holds whole (the input x, the biases)
    are cut locally with `shard.all_slice`; its gradient puts the slice
    into zeros (a partial gradient, summed by gt-data-parallel).

    The function results are row blocks, the loss is the mean over the
    rank's rows, seeded with its share of the global labelled count
    (`gt.row_shard_grid = "gt_mop"` on `@main`); run gt-data-parallel with
    `dp=P presummed` after gt-autodiff.

    Example (PyG's GCNConv, P = 2, N = 64, F = 16):

    ```mlir
    // before
    %h = gt.linear %x, %w : (tensor<64x8xf32>, tensor<8x16xf32>) -> tensor<64x16xf32>
    %a = gt.spmm %rp, %ci, %v, %h : (...) -> tensor<64x16xf32>
    // after
    %xr = shard.all_slice %x on @gt_mop grid_axes = [0] slice_axis = 0
    %h = gt.linear %xr, %w : (tensor<32x8xf32>, ...) -> tensor<32x16xf32>
    %hc = shard.all_to_all %h on @gt_mop grid_axes = [0] split_axis = 1
          concat_axis = 0 : tensor<32x16xf32> -> tensor<64x8xf32>
    %a = gt.spmm %rp, %ci, %v, %hc : (...) -> tensor<64x8xf32>
    ```

    Errors: no input `x [N, F]`, P not dividing N, and an op that touches a
    node value without a rule (a reduction over the nodes, a gather by
    node, a reshape that merges the nodes with another dimension).
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Number of ranks P (must divide N)">,
  ];
  let dependentDialects = ["::megagraph::gt::GTDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::tosa::TosaDialect"];
  let statistics = [
    Statistic<"numSharded", "sharded-values", "values split over the ranks">,
    Statistic<"numSwitches", "all-to-all", "layout switches (all-to-all)">,
    Statistic<"numSlices", "all-slice", "replicated values cut locally">,
  ];
}

def GTMixtureAccelerators
    : Pass<"gt-mixture-accelerators", "::mlir::ModuleOp"> {
  let summary = "Pipeline each aggregation with the transform of its rows "
                "over row chunks (MixGCN's mixture of accelerators)";
  let description = [{
    `--plan ...,moa=1,chunks=K`, after gt-autodiff (forward and backward
    alike). First, each `gt.spmm` whose rows go, through row-local ops
    only, into a dense transform becomes one `gt.spmm_linear` with
    `chunks = K`: the
    runtime aggregates the rows chunk by chunk on one group of threads and
    multiplies each finished chunk by the weight on the other. Matched
    (`%a = gt.spmm ...` of `[N, D]`; with `#gt.halo`, this rank's block of
    the rows, see below):

    * the row-local part: nothing, or one `tosa.mul` of `%a` by an `[N, 1]`
      column (GraphSAGE-mean's 1 / degree) whose result is the only use of
      `%a`;
    * the transform: `gt.linear %b, %w[, %bias]` with `%w` `[D, F]`, or
      `tosa.matmul` of `tosa.reshape %b` `[1, N, D]` by a `[1, D, F]` weight
      with zero points 0 (the backward's `dH = (A^T G) W^T`).

    The aggregated (and scaled) rows are the first result and replace `%b`
    everywhere (the weight's gradient reads them); the transform's result
    replaces the transform. Operands of the transform defined after `%b`
    by pure ops of values that dominate it (the weight's reshape or
    transpose) are cloned before the new op.

    Then the transform first (GCN's forward `A (X W)`, GraphSAGE's
    backward `A^T ((G W^T) / deg)`): each remaining `gt.spmm` whose input `[M, F]` comes from `gt.linear %x, %w[, %bias]`
    or from `tosa.matmul` `[1, M, F]` by a `[1, D, F]` weight (zero points
    0), through reshapes between `[M, F]` and `[1, M, F]`, additions of
    zeros and at most one `tosa.mul` by an `[M, 1]` column, each value but
    the last used only by the next, becomes one `gt.linear_spmm` with
    `chunks = K` where the aggregation was:

    ```mlir
    %h = gt.linear %x, %w : (tensor<100x16xf32>, tensor<16x32xf32>) -> ...
    %y = gt.spmm %rp, %ci, %v, %h : (...) -> tensor<100x32xf32>
    // becomes
    %h, %y = gt.linear_spmm %rp, %ci, %v, %x, %w chunks = 4 : (...) -> ...
    ```

    The transformed rows (first result) replace the aggregation's input
    for its other readers; when one of them comes before the aggregation,
    it is left sequential. An aggregation already pipelined with the
    transform after it is not matched again.

    Under partition parallelism (`--plan gp=P,moa=1`, gt-partition-parallel
    before it) the aggregations are `gt.spmm` with `#gt.halo` over this
    rank's block of N / P rows: the same forms match on the block, and the
    new op keeps `#gt.halo` (its kernel exchanges the halo rows the
    aggregation would have, then pipelines the block). Under the mixture
    of parallelism (`--plan mop=P,moa=1`, gt-mixture-parallel before it)
    an aggregation of all N rows and D / P columns reaches its transform
    through the `shard.all_to_all` (split 0, concat 1, 1-D grid) that
    switches to the rank's N / P rows, and a transform of the rank's rows
    reaches its aggregation through the one (split 1, concat 0) that
    switches to all N rows of F / P columns, read by the aggregation only:
    both forms match through the switch and the new op takes it in
    (`gt.mop_switch = #gt.halo<parts = P, nodes = N>`; its kernel
    exchanges chunk by chunk).

    Errors (one line each): K larger than the rows of a matched
    aggregation or transform, and a module where nothing matches.
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", /*default=*/"4",
           "Row chunks K of the pipeline (1 <= K <= N)">,
  ];
  let dependentDialects = ["::megagraph::gt::GTDialect",
                           "::mlir::tosa::TosaDialect"];
  let statistics = [
    Statistic<"numFused", "pipelined", "aggregations pipelined with a "
              "transform">,
  ];
}

def GTPartitionParallel : Pass<"gt-partition-parallel", "::mlir::ModuleOp"> {
  let summary = "Split a full graph's nodes over P ranks by partition: row "
                "blocks everywhere, halo exchange in the aggregations";
  let description = [{
    Partition parallelism (DistGNN, BNS-GCN style; the baseline of MixGCN)
    on the forward `@main` of a full-graph model (an input `x [N, F]`; after
    gt-raise, before gt-autodiff). Every value that carries the nodes holds
    this rank's N / P rows (a METIS part: the driver numbers the nodes part
    by part). The sparse aggregations over node values get
    `gt.halo = #gt.halo<parts = P, nodes = N>`: their kernel computes the
    rank's rows of the N x N product and exchanges the boundary rows each
    part needs from the others (and gt-autodiff's transposed SpMM does the
    same for the gradient). The graph part of the model (CSR, degrees,
    normalization) is computed whole on every rank. Values every rank holds
    whole (the input x) are cut locally with `shard.all_slice`.

    The results, the loss seed and the gradient sum are those of
    gt-mixture-parallel (grid `@gt_gp`).

    Errors: those of gt-mixture-parallel, and edge weights computed from
    parameters (their gradient would need the halo too).
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Number of ranks P (must divide N)">,
  ];
  let dependentDialects = ["::megagraph::gt::GTDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::tosa::TosaDialect"];
  let statistics = [
    Statistic<"numSharded", "sharded-values", "values split over the ranks">,
    Statistic<"numHalo", "halo-spmm", "aggregations with a halo exchange">,
    Statistic<"numSlices", "all-slice", "replicated values cut locally">,
  ];
}

def GTZeroGather : Pass<"gt-zero-gather", "::mlir::ModuleOp"> {
  let summary = "ZeRO-1/2: update parameter shards, all-gather the "
                "parameters; ZeRO-3: shard-sized parameter storage";
  let description = [{
    Completes `gt-data-parallel{zero=1}` after gt-optimizer. For each
    global `@gt.zero.bucket<k>` (its `#gt.zero_shard`: the parameters it
    packs, their sizes, the padded length), in the training step `@main`:

    * its loads become this rank's shard of the current parameters: the
      flattened parameters, zero-padded, through `shard.all_slice` over
      `@gt_dp` (no communication);
    * its store (the optimizer's updated shard) becomes a `shard.all_gather`
      whose slices are reshaped and stored into the parameters;
    * the global is erased. The optimizer state (`<bucket>.adam_m/_v`)
      stays at shard size: 1/dp of the parameters' on every rank; each
      moment global gets the bucket's packing as `gt.zero_moment`, from
      which the state table says where each parameter's moments lie (a
      checkpoint then resumes under another plan).

    With `zero = 3` in the module's `gt.plan` (ZeRO stage 3) the global
    stays instead and holds the parameters: its loads stay, its store is
    the update of this rank's shard only. The parameter globals become
    immutable initial weights (`gt.param_init`); on the first step (flag
    global `@gt.zero.ready`) an `scf.if` stores their `shard.all_slice`
    into the shard global. Each bucket (one layer's parameters) is
    all-gathered for the forward, and again (from a copy of the shard, so
    that CSE keeps both) for the backward; the slices, placed right before
    the phase's first read of the bucket, replace the parameters' loads.
    In each phase the first bucket read is gathered right there; every
    later one is gathered one layer ahead, right before the first read of
    the bucket the phase reads before it, and marked `gt.overlap`, so that
    gt-shard-to-runtime starts it there and waits at its slices: it moves
    while the layer before it computes, and at most two layers' full
    parameters are live at once. The backward starts at the first op
    reading the labels, the loss seed or an output cotangent.

    Example:

    ```mlir
    // before
    %s = ml_program.global_load @gt.zero.bucket0 : tensor<14xf32>
    ml_program.global_store @gt.zero.bucket0 = %new : tensor<14xf32>
    // after
    %p = tosa.concat %w_flat, %b_flat, %pad ...
    %s = shard.all_slice %p on @gt_dp grid_axes = [0] slice_axis = 0 ...
    %all = shard.all_gather %new on @gt_dp grid_axes = [0] gather_axis = 0 ...
    ml_program.global_store @w = ...
    ```
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::tosa::TosaDialect",
                           "::mlir::ml_program::MLProgramDialect"];
  let statistics = [
    Statistic<"numGathered", "parameters", "parameters all-gathered per step">,
  ];
}

def GTPipelineSplit : Pass<"gt-pipeline-split", "::mlir::ModuleOp"> {
  let summary = "Split the forward @main into pipeline stage functions";
  let description = [{
    Pipeline parallelism, step 1, on the forward `@main` (before
    gt-autodiff). The ops that depend on a graph input are the compute ops;
    parameter loads, constants and what is computed from them only are
    cloned into the stage that uses them. A parameter that several stages
    read (tied weights; Graphormer's spatial table, read by every layer's
    attention) belongs to the first of them: its value is sent on to the
    later readers as one more `act<i>` (passed through the stages between),
    and its cotangents come back as the activations' do, so its gradient on
    the first stage's rank sums every stage's part. A cut point is a position in the
    compute ops' order right after a source op (one reading only graph
    inputs and parameters: an embedding or bias encoder), or where the
    number of live activations crossing it has a local minimum; every
    crossing value must be a static float tensor. The compute ops between
    consecutive cut points form a unit (an encoder, the attention or the FFN
    half of a transformer layer, ...), whatever op names the model uses.

    Units get costs from `CostOpInterface` (defaults from shapes for TOSA
    ops) priced with the plan search's hardware profile (`profile`,
    megagraph/Plan/Profile.h; default cpu-here): gt.linear and tosa.matmul
    at the profile's GEMM rate (small GEMMs, a dimension under 64, at its
    small-GEMM rate), gt.attention at its attention rate, every other op at
    its memory bandwidth, plus its per-op overhead; forward + backward is 3x
    the forward (4x with `recompute`). Besides the time, a unit has the parameter state
    (weights, gradient, two AdamW moments), the activations, the bytes
    entering the unit. `stages` gives the first unit of each stage;
    otherwise `balance=cost` runs the DP of megagraph/Plan/StageSplit.h
    (least slowest stage under 1F1B with `mb` micro-batches, recompute)
    and `balance=even` splits the units evenly (for comparison);
    `memory-limit` bounds each stage's estimated peak (parameters, gradients,
    AdamW moments, stored inputs of its in-flight micro-batches, one
    micro-batch of recomputed activations).

    Stage k becomes `@pp_stage<k>(graph inputs..., act0, ...)`: the
    activations it receives from stage k-1 are arguments
    `{gt.name = "act<i>", gt.recv_from = k-1, gt.differentiable}`, the ones
    it sends to stage k+1 results `{gt.name = "act<j>", gt.send_to = k+1}`
    (an activation several stages read, such as an attention bias, is
    forwarded stage to stage); the last stage returns @main's results. A
    parameter read by two stages is an error. The module gets
    `gt.pipeline = #gt.pipeline<pp, micro_batches, stages, units, unit_time,
    stage_time, stage_memory>`. @main is left as is.
  }];
  let options = [
    Option<"pp", "pp", "int64_t", /*default=*/"2", "Pipeline stages">,
    Option<"microBatches", "mb", "int64_t", /*default=*/"1",
           "Micro-batches per step (memory of in-flight activations)">,
    ListOption<"stages", "stages", "int64_t",
               "First unit of each stage (default: chosen by cost)">,
    Option<"balance", "balance", "std::string", /*default=*/"\"cost\"",
           "Without stages: cost (the DP) or even (as many units per stage)">,
    Option<"memoryLimit", "memory-limit", "int64_t", /*default=*/"0",
           "Per-stage memory limit of the DP in bytes (0: none)">,
    Option<"recompute", "recompute", "bool", /*default=*/"true",
           "Memory model of the DP: stages keep only their inputs per "
           "in-flight micro-batch (false: all their activations)">,
    Option<"profile", "profile", "std::string", /*default=*/"\"cpu-here\"",
           "Hardware profile of the unit times: cpu-here, a100, h100, h200 "
           "or a megagraph-profile JSON file (megagraph-compile --profile)">,
  ];
  let dependentDialects = ["::megagraph::gt::GTDialect",
                           "::mlir::func::FuncDialect"];
}

def GTPipelineTrain : Pass<"gt-pipeline-train", "::mlir::ModuleOp"> {
  let summary = "Per-stage forward, backward and update entry points";
  let description = [{
    Pipeline parallelism, step 2, after gt-pipeline-split. For each stage k
    of `@pp_stage<k>`:
      * `@pp_s<k>_fwd` (all but the last stage; entry `s<k>.fwd`): the
        stage forward, whose results the driver sends to stage k+1.
      * `@pp_s<k>_bwd` (entry `s<k>.bwd`): recomputes the stage forward
        from its inputs (activation recomputation: a stage keeps only its
        inputs per in-flight micro-batch) and runs the reverse sweep of
        gt-autodiff: for the last stage from the masked cross-entropy
        (`labels`, `label_mask`, `eval_mask` in; `loss`, `correct`,
        `eval_correct` out), otherwise from the cotangents `d<act>` of the
        stage's results; it returns `d<act>` for the received activations
        and `grad:<param>` for the stage's parameters.
        With `recompute=false` (all but the last stage, whose backward
        follows its forward at once) `s<k>.fwd` also returns the forward
        values the backward reads (`saved<i>`, kept by the driver per
        in-flight micro-batch) and `s<k>.bwd` takes them instead of
        recomputing (parameter loads and constants are redone).
      * `@pp_s<k>_update` (entry `s<k>.update`): the gt-optimizer update of
        the stage's parameters from the gradients accumulated over the
        step's micro-batches (inputs `grad:<param>`), with this pass's
        optimizer options (clip-grad-norm is refused: the norm spans
        the stages). With `dp > 1` and `zero=1|2` the update itself sums
        the accumulated gradients over the stage's dp replicas:
        gt-data-parallel{presummed, pp} reduce-scatters them (the driver
        weights each micro-batch by n_m / N, so a sum is the global
        gradient), gt-optimizer keeps the moments at the shard's size and
        gt-zero-gather all-gathers the updated shard into the parameters;
        the driver then does not all-reduce the gradients itself.
    `@main` becomes a stub with the driver's view of one step (graph inputs
    with mb times the micro-batch, labels, masks -> loss, correct,
    eval_correct; it returns zeros and is never called: the driver runs the
    1F1B schedule over the entries, runtime/driver/Pipeline.cpp).
  }];
  let options = !listconcat(GTOptimizerRecipeOptions, [
    Option<"recompute", "recompute", "bool", /*default=*/"true",
           "Stage backwards recompute the forward (false: the forward "
           "returns the values the backward reads as saved<i>)">,
    Option<"dp", "dp", "int64_t", /*default=*/"1",
           "Data-parallel replicas of each stage">,
    Option<"zero", "zero", "int64_t", /*default=*/"0",
           "ZeRO stage of the stages' updates over the dp replicas: 0 (the "
           "driver all-reduces the gradients) or 1 and 2 (the update "
           "reduce-scatters them and keeps sharded optimizer state)">,
    Option<"cp", "cp", "int64_t", /*default=*/"1",
           "Context-parallel ranks per stage replica (gt-context-parallel "
           "ran before the split): the updates' ZeRO shards span dp x cp">,
  ]);
  let dependentDialects = ["::megagraph::gt::GTDialect",
                           "::mlir::tosa::TosaDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           // gt-recompute's copies, run inside it.
                           "::mlir::bufferization::BufferizationDialect"];
}

def GTShardToRuntime : Pass<"gt-shard-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower shard collectives on tensors to runtime calls";
  let description = [{
    Replaces every `shard.all_reduce`, `all_gather`, `reduce_scatter`,
    `all_to_all`, `all_slice` (a local copy of this rank's piece),
    `broadcast`, `send`, `recv` and `shift` on static f32
    tensors by a call to the communication runtime
    (`runtime/include/megagraph/Comm.h`, `_mlir_ciface_mgrt_comm_*_f32`),
    which runs it on MPI (host) or NCCL (device) groups. Upstream MLIR 22
    lowers only all_reduce to its `mpi` dialect; this keeps one path for
    both backends.

    The operand is flattened and copied into a fresh buffer
    (`bufferization.materialize_in_destination`), the runtime function gets
    rank-1 `memref<?xf32>` operands, the grid as four sizes (at most four
    axes; missing ones are 1) and the group's axes as a bit mask; the result
    is the output buffer (`bufferization.to_tensor restrict`) reshaped back.
    Grids no longer referred to are erased.
    An all_to_all whose split and concat axes differ (or are not leading),
    and an all_slice off the leading dimensions, first make the P pieces
    of their split axis contiguous (a tosa.reshape and tosa.transpose that
    put the piece index first); the all_to_all lays the received pieces
    along its concat axis the same way. `shard.process_linear_index`
    becomes a call of `mgrt_comm_group_rank` (i64).
    A reduce_scatter, all_reduce or all_gather marked `gt.overlap` becomes
    the started call (`..._start_f32`, returning a request) where it
    stands and `mgrt_comm_wait_f32` right before the first op that reads
    its result or starts the next overlapped collective of its chain (the
    all_gathers are one chain, the reduce_scatters and all_reduces the
    other), the block's terminator at the latest.
    Conditions (errors otherwise): static shapes; f32; the grid's shape
    static; `grid_axes` ascending; gather / scatter axes preceded only by
    unit dimensions (so pieces are contiguous); the group size dividing a
    split or slice axis; shift over its shift axis only; reductions sum,
    average, max, min.

    Example:

    ```mlir
    %1 = shard.all_reduce %0 on @g grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    // becomes
    %buf = memref.alloc() : memref<4xf32>
    bufferization.materialize_in_destination %0 in restrict writable %buf ...
    %dyn = memref.cast %buf : memref<4xf32> to memref<?xf32>
    func.call @mgrt_comm_all_reduce_f32(%dyn, %c2, %c1, %c1, %c1, %c1, %c0) ...
    %1 = bufferization.to_tensor %buf restrict writable ...
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::tosa::TosaDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numLowered", "collectives", "collectives lowered">,
  ];
}

#endif // MEGAGRAPH_PASSES_PASSES_TD
