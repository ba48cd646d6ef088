//===- GTAttrDefs.td - gt dialect attributes --------------*- tablegen -*-===//
//
// Part of MegaGraph. `#gt.plan` records the parallel plan chosen by the
// search (or given by --plan) on the module; gt-apply-plan reads it.
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

    Parameters left out take their defaults (1, 1, 1, 1, 0, false,
    "allgather", []).

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
    GT_I64ListParameter:$stages
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Total number of devices of the grid (dp * pp * cp).
    int64_t getNumDevices() const { return getDp() * getPp() * getCp(); }
  }];
}

#endif // MEGAGRAPH_DIALECT_GT_GTATTRDEFS_TD
