//===- ImportContext.h - State shared by the ONNX op importers --*- C++ -*-===//
//
// Part of MegaGraph. The importer walks the ONNX graph in order; each node is
// handled by a function registered per op type (OnnxOps*.cpp). They share
// this context: the tensor table (an MLIR value and/or a compile-time
// constant per ONNX name), attribute access, diagnostics that name the node,
// and builders for TOSA ops with static result types.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_LIB_IMPORT_ONNX_IMPORTCONTEXT_H
#define MEGAGRAPH_LIB_IMPORT_ONNX_IMPORTCONTEXT_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace megagraph::onnx_import {

//===----------------------------------------------------------------------===//
// Compile-time constants
//===----------------------------------------------------------------------===//

/// A small tensor whose value is known at import time: Constant nodes,
/// integer initializers, and everything computed from them (shape
/// arithmetic). Floats are held as double, integers and bools as int64.
struct ConstTensor {
  mlir::Type elementType;
  llvm::SmallVector<int64_t> shape;
  std::vector<double> floats; // when elementType is a float type
  std::vector<int64_t> ints;  // otherwise (integers, i1)

  bool isFloat() const { return llvm::isa<mlir::FloatType>(elementType); }
  int64_t numElements() const;
  /// Element `i` as double / int64, whatever the storage.
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  /// A tensor of the same element type and `shape`, zero-filled.
  static ConstTensor zeros(mlir::Type elementType,
                           llvm::ArrayRef<int64_t> shape);
  /// Writes element `i` (rounding/truncating to the element type).
  void set(int64_t i, double value);
  /// The value as an MLIR attribute of `tensor<shape x elementType>`.
  mlir::DenseElementsAttr toAttr() const;
};

//===----------------------------------------------------------------------===//
// The context
//===----------------------------------------------------------------------===//

/// One ONNX tensor as the importer knows it: an SSA value, a constant, or
/// both (a constant is materialized as `tosa.const` on first use).
struct TensorInfo {
  mlir::Value value;
  std::optional<ConstTensor> constant;
};

class ImportContext;
using OpHandler = std::function<mlir::LogicalResult(ImportContext &,
                                                    const onnx::NodeProto &)>;

/// Registry of handlers by ONNX op type, filled by the OnnxOps*.cpp files.
llvm::StringMap<OpHandler> &getOpHandlers();
void registerElementwiseOps(llvm::StringMap<OpHandler> &handlers);
void registerShapeOps(llvm::StringMap<OpHandler> &handlers);
void registerNNOps(llvm::StringMap<OpHandler> &handlers);
void registerReductionOps(llvm::StringMap<OpHandler> &handlers);
void registerIndexingOps(llvm::StringMap<OpHandler> &handlers);
void registerAttentionOps(llvm::StringMap<OpHandler> &handlers);

/// Converts an ONNX element type code to an MLIR type (null if unsupported).
mlir::Type convertElementType(mlir::MLIRContext *ctx, int32_t onnxType);

/// The files that hold tensors stored outside the model (ONNX external data,
/// as `torch.onnx.export` writes `model.onnx.data` beside `model.onnx`).
/// Locations are relative to the model's directory; each file is mapped once.
class ExternalData {
public:
  /// `baseDir` is the model's directory; empty when the model has no file
  /// (read from stdin), where external data cannot be found.
  explicit ExternalData(std::string baseDir) : baseDir(std::move(baseDir)) {}

  /// The bytes of `proto`'s data (its `location`, `offset` and `length`
  /// entries), or failure with `error` naming the tensor and what to do.
  mlir::FailureOr<llvm::StringRef> read(const onnx::TensorProto &proto,
                                        std::string &error);

private:
  std::string baseDir;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files;
};

/// Reads an initializer / Constant value into a ConstTensor. Tensors stored
/// externally are read through `external` (an error without one).
mlir::FailureOr<ConstTensor> readTensorProto(mlir::MLIRContext *ctx,
                                             const onnx::TensorProto &proto,
                                             std::string &error,
                                             ExternalData *external = nullptr);

class ImportContext {
public:
  ImportContext(mlir::OpBuilder &builder, int64_t opset)
      : b(builder), opset(opset) {}

  mlir::OpBuilder &b;
  int64_t opset;
  /// Where tensors stored outside the model file are read from.
  ExternalData *external = nullptr;
  /// The node being imported (for diagnostics and locations).
  const onnx::NodeProto *node = nullptr;
  mlir::Location loc() const;

  //===--------------------------------------------------------------------===//
  // Tensors
  //===--------------------------------------------------------------------===//

  llvm::StringMap<TensorInfo> tensors;

  /// True if input `i` of the node is present (optional inputs are "").
  bool hasInput(int i) const;
  /// The value of input `i`, materializing constants. Emits an error and
  /// returns null when the name is unknown.
  mlir::Value input(int i);
  /// The ranked type of input `i` (value or constant).
  mlir::RankedTensorType inputType(int i);
  /// The constant value of input `i` if known at import time.
  const ConstTensor *inputConst(int i);
  /// Input `i` as a list of integers, which must be a compile-time constant
  /// (a shape, axes, starts...). Emits "needs a constant" otherwise.
  mlir::FailureOr<llvm::SmallVector<int64_t>> inputInts(int i,
                                                        llvm::StringRef what);
  /// Binds output `i` of the node.
  void setOutput(int i, mlir::Value v);
  void setOutputConst(int i, ConstTensor c);

  /// Materializes a constant as `tosa.const`.
  mlir::Value materialize(const ConstTensor &c);

  //===--------------------------------------------------------------------===//
  // Attributes
  //===--------------------------------------------------------------------===//

  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t attrInt(llvm::StringRef name, int64_t dflt) const;
  float attrFloat(llvm::StringRef name, float dflt) const;
  std::string attrString(llvm::StringRef name, llvm::StringRef dflt) const;
  std::optional<llvm::SmallVector<int64_t>>
  attrInts(llvm::StringRef name) const;

  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//

  /// Emits "node 'NAME' (OP, opset N): MESSAGE" and returns failure.
  mlir::LogicalResult fail(const llvm::Twine &message);
  /// Normalizes a possibly negative axis for `rank`; fails with a message if
  /// out of range.
  mlir::FailureOr<int64_t> normAxis(int64_t axis, int64_t rank);

  //===--------------------------------------------------------------------===//
  // TOSA builders (static shapes)
  //===--------------------------------------------------------------------===//

  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type elem) {
    return mlir::RankedTensorType::get(shape, elem);
  }
  mlir::Value splat(mlir::Type elem, double value,
                    llvm::ArrayRef<int64_t> shape = {});
  /// A tensor with no elements (some dimension is 0). TOSA types must have
  /// elements, so such values are `tensor.empty`: the shape is all there is.
  mlir::Value emptyTensor(llvm::ArrayRef<int64_t> shape, mlir::Type elem);
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value v, llvm::ArrayRef<int64_t> perm);
  /// Converts the element type with ONNX Cast semantics: float to integer
  /// truncates toward zero (TOSA's cast rounds, so a floor/ceil comes
  /// first), anything to bool is `!= 0`.
  mlir::Value cast(mlir::Value v, mlir::Type elem);
  /// Reshapes `v` to `rank` by prepending unit dims (numpy broadcasting).
  mlir::Value expandRank(mlir::Value v, int64_t rank);
  /// The numpy-broadcast shape of two shapes, or failure.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  broadcastShape(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);
  /// Builds a broadcasting binary elementwise op (add, sub, mul, div, pow,
  /// max, min, equal, greater, logical and/or/xor).
  mlir::FailureOr<mlir::Value> binary(llvm::StringRef kind, mlir::Value a,
                                      mlir::Value c);
  mlir::Value unary(llvm::StringRef kind, mlir::Value v);
  /// Reduction over `axes` (sum, max, min, prod, mean); keeps reduced dims
  /// when `keepDims`.
  mlir::Value reduce(llvm::StringRef kind, mlir::Value v,
                     llvm::ArrayRef<int64_t> axes, bool keepDims);
  /// Batched matmul with numpy semantics for rank >= 1 operands.
  mlir::FailureOr<mlir::Value> matmul(mlir::Value a, mlir::Value c);
  /// Broadcasts `v` to `shape` (tile on unit dims).
  mlir::Value broadcastTo(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  mlir::Value slice(mlir::Value v, llvm::ArrayRef<int64_t> start,
                    llvm::ArrayRef<int64_t> size);
  mlir::Value concat(mlir::ValueRange vs, int64_t axis);
  /// Reverses `v` along `axis`.
  mlir::Value reverse(mlir::Value v, int64_t axis);
  /// Gathers along `axis` with integer `indices` (a value of any shape,
  /// already in [0, dim)): the result is
  /// shape[:axis] + indices.shape + shape[axis+1:] (ONNX Gather).
  mlir::Value gather(mlir::Value v, int64_t axis, mlir::Value indices);
  /// Gathers along `axis` with compile-time indices in [0, dim); the rank
  /// is kept (used by strided slices and diagonals).
  mlir::Value gather(mlir::Value v, int64_t axis,
                     llvm::ArrayRef<int64_t> indices);
  mlir::Value select(mlir::Value pred, mlir::Value onTrue, mlir::Value onFalse);
  /// An elementwise `linalg.generic` over the numpy-broadcast shape of
  /// `ins`, for scalar arithmetic TOSA lacks (exact remainders): `body` maps
  /// the scalar operands to the result element. Null after a diagnostic
  /// when the shapes do not broadcast.
  mlir::Value
  elementwise(mlir::ValueRange ins, mlir::Type resultElem,
              llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                             mlir::ValueRange)>
                  body);
  /// A [1 x ... x 1] splat of `value` of `v`'s element type and rank, the
  /// scalar operand of a broadcasting binary op.
  mlir::Value scalarLike(mlir::Value v, double value);
};

/// Shape of a ranked tensor value.
inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
}
inline mlir::Type elemOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getElementType();
}

} // namespace megagraph::onnx_import

#endif // MEGAGRAPH_LIB_IMPORT_ONNX_IMPORTCONTEXT_H
