//===- GTInterfaces.td - MegaGraph op interfaces ----------*- tablegen -*-===//
//
// Part of MegaGraph. The two interfaces every op in a training program must
// answer: how to differentiate it (GradientOpInterface) and what it costs
// (CostOpInterface). gt ops implement them directly; upstream ops produced by
// the ONNX importer get them through external models.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_DIALECT_GT_GTINTERFACES_TD
#define MEGAGRAPH_DIALECT_GT_GTINTERFACES_TD

include "mlir/IR/OpBase.td"

def GT_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::megagraph::gt";
  let description = [{
    Reverse-mode gradient rule of an op. `gt-autodiff` walks the forward
    program backwards and asks each op to build, at the builder's insertion
    point, the gradients of its operands from the gradients of its results.

    `resultGrads` has one entry per result (a null Value when that result
    does not influence the loss). On success `operandGrads` holds one entry
    per operand; a null entry means the operand is not differentiable (an
    integer index, a mask) or receives no gradient.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Builds the operand gradients from the result gradients.",
      /*retTy=*/"::llvm::LogicalResult",
      /*methodName=*/"buildGradient",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::mlir::ValueRange":$resultGrads,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return $_op->emitOpError("has no gradient rule yet");
      }]>,
    InterfaceMethod<
      /*desc=*/[{Returns whether operand `index` can carry a gradient
                 (floating-point data, not an index or a mask).}],
      /*retTy=*/"bool",
      /*methodName=*/"isDifferentiableOperand",
      /*args=*/(ins "unsigned":$index),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        auto type = ::llvm::dyn_cast<::mlir::ShapedType>(
            $_op->getOperand(index).getType());
        return type && ::llvm::isa<::mlir::FloatType>(type.getElementType());
      }]>,
  ];
}

def GT_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::megagraph::gt";
  let description = [{
    Static cost of one execution of an op on its (static) operand shapes,
    used by the Profile-Model-Search planner. Every method returns
    `::megagraph::gt::kUnknownCost` (-1) when a shape is dynamic.

    * `getFlops`: floating-point operations of the forward computation
      (a multiply-add counts as 2).
    * `getBytesMoved`: bytes read and written at least once.
    * `getActivationBytes`: bytes the backward pass needs kept from this op.
    * `getTransientBytes`: peak scratch bytes beyond operands and results
      (for a fused attention: one score block, not `[H, S, S]`).
  }];
  let methods = [
    InterfaceMethod<"Forward FLOPs.", "int64_t", "getFlops", (ins), "",
      [{ return ::megagraph::gt::detail::defaultFlops($_op); }]>,
    InterfaceMethod<"Bytes read plus written.", "int64_t", "getBytesMoved",
      (ins), "",
      [{ return ::megagraph::gt::detail::defaultBytesMoved($_op); }]>,
    InterfaceMethod<"Bytes kept for the backward pass.", "int64_t",
      "getActivationBytes", (ins), "",
      [{ return ::megagraph::gt::detail::defaultActivationBytes($_op); }]>,
    InterfaceMethod<"Peak scratch bytes.", "int64_t", "getTransientBytes",
      (ins), "", [{ return 0; }]>,
  ];
}

#endif // MEGAGRAPH_DIALECT_GT_GTINTERFACES_TD
