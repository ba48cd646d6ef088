//===- GTDialect.td - The gt dialect ----------------------*- tablegen -*-===//
//
// Part of MegaGraph. The `gt` dialect holds the Graph Transformer semantics
// that generic tensor ops cannot express cheaply: attention with a topology
// bias, graph encodings, sparse message passing and the layer structure.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTDIALECT_TD
#define MEGAGRAPH_DIALECT_GT_GTDIALECT_TD

include "mlir/IR/OpBase.td"

def GT_Dialect : Dialect {
  let name = "gt";
  let cppNamespace = "::megagraph::gt";
  let summary = "Graph Transformer operations for MegaGraph";
  let description = [{
    The `gt` dialect models the parts of a Graph Transformer (GT) that decide
    its memory and its parallelization: multi-head attention with an additive
    topology bias `[H, S, S]` (or a row block of it), the graph encodings the
    bias and the node features come from (spatial, edge, degree and node
    embeddings), sparse attention and message passing over graph edges, the
    training loss, and `gt.layer`, the unit of cost and of pipeline stage
    splitting. Every other computation stays in upstream dialects (TOSA,
    linalg, tensor, arith).

    Tensor layout conventions: node features are `[B, S, D]` (B sequences of
    S nodes, hidden size D) or `[S, D]`; heads are packed in the hidden
    dimension (`D = H * head_dim`); attention biases are `[H, Sq, Sk]` or
    `[B|1, H|1, Sq, Sk]`, where `Sq` may be a row block of `Sk` under context
    parallelism.
  }];
  let useDefaultAttributePrinterParser = 1;
  // The attributes passes hand each other (GTNames.h) hold their types.
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let extraClassDeclaration = [{
    /// Registers the attribute definitions (see GTAttrDefs.td).
    void registerAttributes();
  }];
}

class GT_Op<string mnemonic, list<Trait> traits = []>
    : Op<GT_Dialect, mnemonic, traits>;

#endif // MEGAGRAPH_DIALECT_GT_GTDIALECT_TD
