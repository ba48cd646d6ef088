//===- GTAttrDefs.td - gt dialect attributes --------------*- tablegen -*-===//
//
// Part of MegaGraph. `#gt.plan` records the parallel plan chosen by the
// search (or given by --plan) on the module; gt-apply-plan reads it. The
// other attributes are what one pass leaves for a later one: the pipeline
// split (`#gt.pipeline`), a ZeRO bucket (`#gt.zero_shard`), the device
// globals of the CUDA lowering (`#gt.device_globals`) and a context-parallel
// attention (`#gt.cp`). The names they are stored under are in GTNames.h.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTATTRDEFS_TD
#define MEGAGRAPH_DIALECT_GT_GTATTRDEFS_TD

include "megagraph/Dialect/GT/GTDialect.td"
include "mlir/IR/AttrTypeBase.td"

/// A bracketed list of integers, `[0, 5]`; empty when absent.
def GT_I64ListParameter : OptionalArrayRefParameter<"int64_t"> {
  let parser = [{ ::megagraph::gt::parseI64List($_parser) }];
  let printer = [{ ::megagraph::gt::printI64List($_printer, $_self) }];
}

/// A bracketed list of strings, `["a", "b"]`.
def GT_StringListParameter : ArrayRefParameter<"::mlir::StringAttr"> {
  let parser = [{ ::megagraph::gt::parseStringList($_parser) }];
  let printer = [{ ::megagraph::gt::printStringList($_printer, $_self) }];
}

/// A bracketed list of symbols, `[@w, @b]`.
def GT_SymbolListParameter : ArrayRefParameter<"::mlir::FlatSymbolRefAttr"> {
  let parser = [{ ::megagraph::gt::parseSymbolList($_parser) }];
  let printer = [{ ::megagraph::gt::printSymbolList($_printer, $_self) }];
}

/// An mgrt_cp_mode (megagraph/ModelABI.h), spelled `allgather`, `ring` or
/// `ulysses`.
def GT_CpModeParameter : AttrParameter<"int64_t", "an mgrt_cp_mode"> {
  let parser = [{ ::megagraph::gt::parseCpMode($_parser) }];
  let printer = [{ ::megagraph::gt::printCpMode($_printer, $_self) }];
}

class GT_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<GT_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def GT_PlanAttr : GT_Attr<"Plan", "plan"> {
  let summary = "A parallel training plan: dp x pp x cp device grid and more";
  let description = [{
    The point of the plan space a training program is compiled for. The
    device grid is `dp x pp x cp`: `dp` splits the B sequences of the global
    batch, `cp` splits the S nodes of each sequence (graph-aware context
    parallelism), `pp` splits the layers into pipeline stages.

    * `micro_batches`: micro-batches per dp replica and step (pipelining).
    * `zero`: ZeRO stage 0-3 of the data-parallel group.
    * `recompute`: recompute each stage's forward during its backward.
    * `cp_mode`: how K/V move in context parallelism: `allgather`, `ring`,
      or `ulysses` (all-to-all from rows to heads, for comparison).
    * `stages`: the first unit of each pipeline stage, counting the units
      (layers, encoders) `gt-pipeline-split` finds in program order; empty
      means "let the cost model choose". When given, it has `pp` strictly
      increasing entries starting at 0.

    Full-graph GCN training (MixGCN) has two more ways to split the N
    nodes of the one graph, each alone on the grid (dp = pp = cp = 1):

    * `mop`: mixture of parallelism over `mop` ranks: the sparse
      aggregations feature-parallel (every rank the whole graph, F / mop
      columns), the dense transforms node-parallel (N / mop rows), an
      all-to-all at each switch.
    * `gp`: partition parallelism over `gp` ranks: N / gp rows (METIS
      parts) everywhere, the aggregations exchanging boundary rows.
    * `moa`, `chunks`: mixture of accelerators: the aggregation and the
      transform of a layer on separate thread groups, pipelined over
      `chunks` node chunks.

    Parameters left out take their defaults (1, 1, 1, 1, 0, false,
    "allgather", [], 1, 1, false, 1).

    Example:

    ```mlir
    module attributes {gt.plan = #gt.plan<dp = 2, pp = 2, cp = 2,
        micro_batches = 4, zero = 1, stages = [0, 5]>} {}
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "1">:$dp,
    DefaultValuedParameter<"int64_t", "1">:$pp,
    DefaultValuedParameter<"int64_t", "1">:$cp,
    DefaultValuedParameter<"int64_t", "1">:$micro_batches,
    DefaultValuedParameter<"int64_t", "0">:$zero,
    DefaultValuedParameter<"bool", "false">:$recompute,
    StringRefParameter<"how K/V move under cp", "\"allgather\"">:$cp_mode,
    GT_I64ListParameter:$stages,
    DefaultValuedParameter<"int64_t", "1">:$mop,
    DefaultValuedParameter<"int64_t", "1">:$gp,
    DefaultValuedParameter<"bool", "false">:$moa,
    DefaultValuedParameter<"int64_t", "1">:$chunks
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Total number of devices (dp * pp * cp * mop * gp).
    int64_t getNumDevices() const {
      return getDp() * getPp() * getCp() * getMop() * getGp();
    }
  }];
}

def GT_PipelineAttr : GT_Attr<"Pipeline", "pipeline"> {
  let summary = "The pipeline split gt-pipeline-split chose";
  let description = [{
    Put on the module by `gt-pipeline-split` (as `gt.pipeline`), read by
    `gt-pipeline-train`; the costs are there for the reader (and the
    driver's measured counterpart).

    * `pp`: the number of stages, `micro_batches` per step.
    * `stages`: the first unit of each stage (`pp` strictly increasing
      entries from 0).
    * `units`: the name of each unit's first op, in program order;
      `unit_time` its estimated time in seconds (one micro-batch).
    * `stage_time` (seconds) and `stage_memory` (bytes): per stage, one
      entry each.

    Example:

    ```mlir
    module attributes {gt.pipeline = #gt.pipeline<pp = 2, micro_batches = 4,
        stages = [0, 1], units = ["gt.linear", "gt.attention"],
        unit_time = [1.0, 2.5], stage_time = [1.0, 2.5],
        stage_memory = [128, 256]>} {}
    ```
  }];
  let parameters = (ins
    "int64_t":$pp,
    "int64_t":$micro_batches,
    GT_I64ListParameter:$stages,
    GT_StringListParameter:$units,
    "::mlir::DenseF64ArrayAttr":$unit_time,
    "::mlir::DenseF64ArrayAttr":$stage_time,
    GT_I64ListParameter:$stage_memory
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GT_ZeroShardAttr : GT_Attr<"ZeroShard", "zero_shard"> {
  let summary = "The parameters a ZeRO bucket's shard global holds";
  let description = [{
    Put by `gt-data-parallel{zero=1..3}` on the global `@gt.zero.bucket<k>`
    (as `gt.zero_shard`), read by `gt-zero-gather`. The bucket concatenates
    the flattened parameters `params` (of `sizes` elements each), padded
    with zeros to `padded` elements so that every rank holds `padded / dp`
    of them.

    Example:

    ```mlir
    ml_program.global private mutable @gt.zero.bucket0(dense<0.0> :
        tensor<14xf32>) : tensor<14xf32> {gt.zero_shard =
        #gt.zero_shard<params = [@w, @b], sizes = [24, 3], padded = 28>}
    ```
  }];
  let parameters = (ins
    GT_SymbolListParameter:$params,
    GT_I64ListParameter:$sizes,
    "int64_t":$padded
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GT_DeviceGlobalsAttr : GT_Attr<"DeviceGlobals", "device_globals"> {
  let summary = "The memref globals the CUDA lowering keeps on the device";
  let description = [{
    Put on the module by `gt-gpu-offload` (as `gt.device_globals`), read by
    `gt-gpu-device-memory` after the LLVM lowering, when the globals' types
    are gone: each global of `globals` and its size in bytes.

    Example:

    ```mlir
    module attributes {gt.device_globals =
        #gt.device_globals<globals = [@w, @b], bytes = [128, 12]>} {}
    ```
  }];
  let parameters = (ins
    GT_SymbolListParameter:$globals,
    GT_I64ListParameter:$bytes
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The size in bytes of global `name`; none when it is not listed.
    std::optional<int64_t> lookup(::llvm::StringRef name) const;
  }];
}

def GT_ContextParallelAttr : GT_Attr<"ContextParallel", "cp"> {
  let summary = "How a gt.attention runs under context parallelism";
  let description = [{
    Put by `gt-context-parallel` on every `gt.attention` (as `gt.cp`; the
    gradient rule copies it to `gt.attention_grad`), read by the op
    verifiers (the keys are `size` times the local ones) and the
    bufferization, which calls the cp kernels with the extra arguments.

    * `size`: the context-parallel group size (`cp`).
    * `mode`: how K/V move, an mgrt_cp_mode: `allgather`, `ring`,
      `ulysses`.
    * `grid`: the runtime's 4-D process grid (`[dp, cp, 1, 1]`, or
      `[dp, pp, cp, 1]` inside pipeline stages), and `axes` the bit mask of
      the grid axes that form the cp group (2: the second axis), as in the
      runtime's shard calls.
    * `seq` (omitted when 0): the sequence length S when `size` does not
      divide it. Block c then holds `mgrt_cp_block_rows(S, size, c)` rows
      (megagraph/ModelABI.h: S / size, one more for the first S % size
      blocks) in the first rows of its ceil(S / size) local ones; the rest
      are padding, which the kernels neither read nor count as keys and
      whose outputs and gradients they zero. The bias, mask and spatial
      distance keep S key columns.

    Example:

    ```mlir
    %o = gt.attention %q, %k, %v heads = 2 {gt.cp = #gt.cp<size = 2,
        mode = ring, grid = [1, 2, 1, 1], axes = 2>} : ...
    ```
  }];
  let parameters = (ins
    "int64_t":$size,
    GT_CpModeParameter:$mode,
    GT_I64ListParameter:$grid,
    "int64_t":$axes,
    DefaultValuedParameter<"int64_t", "0">:$seq
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GT_HaloAttr : GT_Attr<"Halo", "halo"> {
  let summary = "How a gt.spmm runs under partition parallelism";
  let description = [{
    Put by `gt-partition-parallel` on every `gt.spmm` that aggregates node
    values (as `gt.halo`; the gradient rule copies it to the transposed
    SpMM), read by the op verifier and the bufferization. The `nodes`
    nodes are split into `parts` equal row blocks, block r on rank r of the
    grid `[parts, 1, 1, 1]`: the CSR holds all `nodes` rows (every rank
    has the whole graph structure), the dense operand and the result only
    this rank's `nodes / parts` rows. The kernel (`mgrt_halo_spmm_f32`)
    computes this rank's rows and receives the other blocks' rows that
    they reference (the halo) from their owners, sending its own rows that
    the other blocks reference.

    Example:

    ```mlir
    %y = gt.spmm %rp, %ci, %w, %x {gt.halo = #gt.halo<parts = 2,
        nodes = 100>} : (tensor<101xi64>, tensor<800xi64>, tensor<800xf32>,
        tensor<50x64xf32>) -> tensor<50x64xf32>
    ```
  }];
  let parameters = (ins "int64_t":$parts, "int64_t":$nodes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // MEGAGRAPH_DIALECT_GT_GTATTRDEFS_TD
