//===- OnnxImporter.cpp - ONNX to MLIR import -------------------*- C++ -*-===//
//
// Part of MegaGraph. Model-level import: parse and validate the protobuf,
// bind graph inputs (static shapes, overridable by --input-shape),
// initializers (float ones become trainable ml_program globals, integer ones
// compile-time constants), dispatch every node to its handler, and return
// the graph outputs. Any failure produces one diagnostic naming the node and
// what to do, never a crash.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Import/OnnxImporter.h"

#include "ImportContext.h"

#include "megagraph/Dialect/GT/GTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "onnx/defs/parser.h"

using namespace mlir;
using namespace megagraph;
using namespace megagraph::onnx_import;

namespace {

/// Lowest and highest default-domain opsets the importer implements.
constexpr int64_t kMinOpset = 13;
constexpr int64_t kMaxOpset = 17;

std::string shapeToString(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

class ModelImporter {
public:
  ModelImporter(MLIRContext &ctx, const OnnxImportOptions &options)
      : ctx(ctx), options(options), builder(&ctx) {}

  OwningOpRef<ModuleOp> run(const onnx::ModelProto &model);

private:
  LogicalResult error(const Twine &message) {
    emitError(fileLoc()) << message;
    return failure();
  }
  Location fileLoc() {
    return FileLineColLoc::get(&ctx, options.fileName, 0, 0);
  }
  FailureOr<int64_t> checkOpset(const onnx::ModelProto &model);
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &info);
  LogicalResult importInitializer(const onnx::TensorProto &init,
                                  ImportContext &ic, ModuleOp module,
                                  OpBuilder &moduleBuilder);

  MLIRContext &ctx;
  const OnnxImportOptions &options;
  OpBuilder builder;
};

FailureOr<int64_t> ModelImporter::checkOpset(const onnx::ModelProto &model) {
  std::optional<int64_t> opset;
  for (const onnx::OperatorSetIdProto &id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx")
      opset = id.version();
  }
  if (!opset)
    return error("the model imports no default-domain (ai.onnx) opset; "
                 "re-export it with torch.onnx.export(..., opset_version=17)");
  if (*opset < kMinOpset || *opset > kMaxOpset)
    return error("opset " + Twine(*opset) +
                 " is not supported: MegaGraph imports ai.onnx opsets " +
                 Twine(kMinOpset) + "-" + Twine(kMaxOpset) +
                 "; re-export with torch.onnx.export(..., opset_version=17)");
  return *opset;
}

FailureOr<RankedTensorType>
ModelImporter::inputType(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type())
    return error("graph input '" + info.name() +
                 "' is not a tensor (sequences and maps are not supported)");
  const onnx::TypeProto_Tensor &tt = info.type().tensor_type();
  Type elem = convertElementType(&ctx, tt.elem_type());
  if (!elem)
    return error("graph input '" + info.name() +
                 "' has unsupported element type " + Twine(tt.elem_type()));
  auto it = options.inputShapes.find(info.name());
  if (it != options.inputShapes.end()) {
    const SmallVector<int64_t> &given = it->second;
    if (tt.has_shape() && tt.shape().dim_size() != (int)given.size())
      return error("--input-shape " + info.name() + "=" +
                   shapeToString(given) + " has rank " + Twine(given.size()) +
                   " but the model's input has rank " +
                   Twine(tt.shape().dim_size()));
    for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
      const auto &dim = tt.shape().dim(i);
      if (dim.has_dim_value() && dim.dim_value() != given[i])
        return error("--input-shape " + info.name() + "=" +
                     shapeToString(given) + " contradicts the model's static "
                     "dimension " + Twine(i) + " = " + Twine(dim.dim_value()));
    }
    return RankedTensorType::get(given, elem);
  }
  if (!tt.has_shape())
    return error("graph input '" + info.name() +
                 "' has no shape; pass --input-shape " + info.name() +
                 "=D0xD1x...");
  SmallVector<int64_t> shape;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &dim = tt.shape().dim(i);
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      std::string sym = dim.has_dim_param() ? " ('" + dim.dim_param() + "')"
                                            : std::string();
      return error("graph input '" + info.name() + "' has a dynamic dimension " +
                   Twine(i) + sym + "; pass --input-shape " + info.name() +
                   "=D0xD1x... with its static shape");
    }
    shape.push_back(dim.dim_value());
  }
  return RankedTensorType::get(shape, elem);
}

LogicalResult ModelImporter::importInitializer(const onnx::TensorProto &init,
                                               ImportContext &ic,
                                               ModuleOp module,
                                               OpBuilder &moduleBuilder) {
  std::string err;
  FailureOr<ConstTensor> c = readTensorProto(&ctx, init, err);
  if (failed(c))
    return error("initializer: " + err);
  if (!c->isFloat()) {
    // Integer initializers are shapes, indices and axes: keep them as
    // compile-time constants so shape arithmetic folds.
    ic.tensors[init.name()] = TensorInfo{Value(), std::move(*c)};
    return success();
  }
  // Float initializers are the model's parameters: persistent, mutable
  // (the optimizer updates them), loaded at the top of @main.
  DenseElementsAttr value = c->toAttr();
  auto global = ml_program::GlobalOp::create(
      moduleBuilder, NameLoc::get(builder.getStringAttr(init.name())),
      init.name(), value.getType(), /*is_mutable=*/true, value,
      builder.getStringAttr("private"));
  global->setAttr("gt.param", builder.getUnitAttr());
  (void)module;
  Value loaded = ml_program::GlobalLoadOp::create(
      builder, NameLoc::get(builder.getStringAttr(init.name())),
      value.getType(), FlatSymbolRefAttr::get(global.getSymNameAttr()));
  ic.tensors[init.name()] = TensorInfo{loaded, std::nullopt};
  return success();
}

OwningOpRef<ModuleOp> ModelImporter::run(const onnx::ModelProto &model) {
  FailureOr<int64_t> opset = checkOpset(model);
  if (failed(opset))
    return nullptr;
  const onnx::GraphProto &graph = model.graph();
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  (*module)->setAttr("gt.source", builder.getStringAttr(options.fileName));
  (*module)->setAttr("gt.onnx_opset", builder.getI64IntegerAttr(*opset));
  OpBuilder moduleBuilder(&ctx);
  moduleBuilder.setInsertionPointToStart(module->getBody());

  // 1. Graph inputs (skipping initializers listed as inputs, as old
  //    exporters do).
  llvm::StringSet<> initNames;
  for (const onnx::TensorProto &init : graph.initializer())
    initNames.insert(init.name());
  for (const auto &[name, shape] : options.inputShapes) {
    bool found = llvm::any_of(graph.input(), [&](const auto &in) {
      return in.name() == name.str();
    });
    if (!found) {
      std::string names;
      for (const auto &in : graph.input())
        if (!initNames.contains(in.name()))
          names += (names.empty() ? "" : ", ") + in.name();
      (void)error("--input-shape names '" + name + "', which is not a graph input "
            "(inputs: " + names + ")");
      return nullptr;
    }
  }
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (initNames.contains(in.name()))
      continue;
    FailureOr<RankedTensorType> type = inputType(in);
    if (failed(type))
      return nullptr;
    argTypes.push_back(*type);
    argNames.push_back(in.name());
  }

  auto func = func::FuncOp::create(moduleBuilder, fileLoc(), "main",
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  ImportContext ic(builder, *opset);
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "gt.name", builder.getStringAttr(name));
    ic.tensors[name] = TensorInfo{body->getArgument(i), std::nullopt};
  }

  // 2. Initializers. Globals go before @main.
  moduleBuilder.setInsertionPoint(func);
  for (const onnx::TensorProto &init : graph.initializer())
    if (failed(importInitializer(init, ic, *module, moduleBuilder)))
      return nullptr;

  // 3. Nodes, in graph order.
  llvm::StringMap<OpHandler> &handlers = getOpHandlers();
  for (const onnx::NodeProto &node : graph.node()) {
    ic.node = &node;
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      (void)ic.fail("custom domain '" + node.domain() +
                    "' is not supported; export with standard ONNX ops");
      return nullptr;
    }
    auto it = handlers.find(node.op_type());
    if (it == handlers.end()) {
      (void)ic.fail("unsupported ONNX op '" + node.op_type() +
                    "'; see the supported-op list in README.md, or rewrite "
                    "the model with supported ops");
      return nullptr;
    }
    if (failed(it->second(ic, node)))
      return nullptr;
    for (const std::string &out : node.output())
      if (!out.empty() && !ic.tensors.count(out)) {
        (void)ic.fail("output '" + out + "' is not produced by this importer "
                      "(unsupported optional output)");
        return nullptr;
      }
  }
  ic.node = nullptr;

  // 4. Graph outputs.
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    auto it = ic.tensors.find(out.name());
    if (it == ic.tensors.end()) {
      (void)error("graph output '" + out.name() + "' is not produced by any node");
      return nullptr;
    }
    if (!it->second.value)
      it->second.value = ic.materialize(*it->second.constant);
    results.push_back(it->second.value);
    resultTypes.push_back(it->second.value.getType());
  }
  func::ReturnOp::create(builder, fileLoc(), results);
  func.setType(builder.getFunctionType(argTypes, resultTypes));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "gt.name", builder.getStringAttr(out.name()));

  if (failed(verify(*module))) {
    (void)error("internal error: the imported module does not verify; please "
          "report this model");
    return nullptr;
  }
  return module;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

LogicalResult megagraph::parseInputShape(StringRef spec,
                                         OnnxImportOptions &options,
                                         std::string &error) {
  auto [name, dims] = spec.split('=');
  if (name.empty() || dims.empty()) {
    error = "--input-shape expects NAME=D0xD1x..., got '" + spec.str() + "'";
    return failure();
  }
  SmallVector<int64_t> shape;
  if (dims != "scalar") {
    SmallVector<StringRef> parts;
    dims.split(parts, 'x');
    for (StringRef p : parts) {
      int64_t d;
      if (p.getAsInteger(10, d) || d < 0) {
        error = "--input-shape " + spec.str() + ": '" + p.str() +
                "' is not a non-negative dimension";
        return failure();
      }
      shape.push_back(d);
    }
  }
  options.inputShapes[name] = shape;
  return success();
}

void megagraph::loadOnnxImportDialects(MLIRContext &context) {
  context.loadDialect<gt::GTDialect, func::FuncDialect, linalg::LinalgDialect,
                      ml_program::MLProgramDialect, tensor::TensorDialect,
                      tosa::TosaDialect>();
}

OwningOpRef<ModuleOp> megagraph::importOnnxModel(MLIRContext &context,
                                                 StringRef bytes,
                                                 const OnnxImportOptions &options) {
  loadOnnxImportDialects(context);
  onnx::ModelProto model;
  if (bytes.empty() ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      !model.has_graph()) {
    emitError(FileLineColLoc::get(&context, options.fileName, 0, 0))
        << "not a valid ONNX model: the protobuf could not be parsed (file "
           "empty, truncated, or not ONNX)";
    return nullptr;
  }
  return ModelImporter(context, options).run(model);
}

OwningOpRef<ModuleOp> megagraph::importOnnxText(MLIRContext &context,
                                                StringRef text,
                                                const OnnxImportOptions &options) {
  loadOnnxImportDialects(context);
  onnx::ModelProto model;
  std::string buffer = text.str();
  onnx::Common::Status status =
      onnx::OnnxParser::Parse(model, buffer.c_str());
  if (!status.IsOK()) {
    emitError(FileLineColLoc::get(&context, options.fileName, 0, 0))
        << "not a valid ONNX text model: " << status.ErrorMessage();
    return nullptr;
  }
  return ModelImporter(context, options).run(model);
}

llvm::StringMap<OpHandler> &megagraph::onnx_import::getOpHandlers() {
  static llvm::StringMap<OpHandler> handlers = [] {
    llvm::StringMap<OpHandler> h;
    registerElementwiseOps(h);
    registerShapeOps(h);
    registerNNOps(h);
    registerReductionOps(h);
    return h;
  }();
  return handlers;
}

SmallVector<StringRef> megagraph::getSupportedOnnxOps() {
  SmallVector<StringRef> ops;
  for (const auto &entry : onnx_import::getOpHandlers())
    ops.push_back(entry.getKey());
  llvm::sort(ops);
  return ops;
}
