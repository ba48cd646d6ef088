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
#include "OnnxChecker.h"

#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "onnx/defs/parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>

using namespace mlir;
using namespace megagraph;
using namespace megagraph::onnx_import;

namespace {

/// Lowest and highest default-domain opsets the importer implements: every
/// handler follows the semantics of each version in this range.
constexpr int64_t kMinOpset = 13;
constexpr int64_t kMaxOpset = 23;

/// How to re-export a PyTorch model at a supported opset: the TorchScript
/// exporter for opsets <= 17, the dynamo (torch.export) one for newer ones.
constexpr const char *kTorchReexport =
    "re-export from PyTorch with torch.onnx.export(..., dynamo=False, "
    "opset_version=17) or torch.onnx.export(..., dynamo=True, "
    "opset_version=23)";

/// The opset that added `op` to ai.onnx, for the supported ops added after
/// kMinOpset (0 for the others): a model importing an older opset cannot
/// use them.
int64_t introducedIn(StringRef op) {
  return llvm::StringSwitch<int64_t>(op)
      .Cases("Trilu", "HardSwish", 14)
      .Case("Mish", 18)
      .Case("Gelu", 20)
      .Cases("Attention", "RMSNormalization", 23)
      .Default(0);
}

std::string shapeToString(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

/// The ONNX name of an element type code ("FLOAT", "STRING", ...).
std::string elemTypeName(int32_t code) {
  if (onnx::TensorProto_DataType_IsValid(code))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(code));
  return "code " + std::to_string(code);
}

/// `D0xD1x...` for a model input shape, with `<param>` for symbolic dims and
/// `<dimI>` for unnamed ones: the template a user fills into --input-shape.
std::string shapeTemplate(const onnx::TensorShapeProto &shape) {
  std::string s;
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto &dim = shape.dim(i);
    s += i ? "x" : "";
    if (dim.has_dim_value() && dim.dim_value() >= 0)
      s += std::to_string(dim.dim_value());
    else if (dim.has_dim_param() && !dim.dim_param().empty())
      s += "<" + dim.dim_param() + ">";
    else
      s += "<dim" + std::to_string(i) + ">";
  }
  return s.empty() ? "scalar" : s;
}

/// True if every dimension of `shape` is a known, non-negative size.
bool isStatic(const onnx::TensorShapeProto &shape) {
  return llvm::all_of(shape.dim(), [](const auto &dim) {
    return dim.has_dim_value() && dim.dim_value() >= 0;
  });
}

/// Largest number of elements accepted for a tensor (keeps size arithmetic
/// in the importer and later passes far from int64 overflow).
constexpr int64_t kMaxElements = int64_t(1) << 48;

/// The element count of `shape`, or nullopt if a dim is negative or the
/// count exceeds kMaxElements.
std::optional<int64_t> checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > kMaxElements / d)
      return std::nullopt;
    n *= d;
  }
  return n;
}

/// The value_info metadata key under which the dynamo exporter records each
/// initializer's torch.export graph-signature kind (PARAMETER, BUFFER,
/// CONSTANT_TENSOR).
constexpr llvm::StringLiteral kTorchInputKindKey =
    "pkg.torch.export.graph_signature.InputSpec.kind";

/// The metadata_props of a message whose metadata field (`field`: 4 in a
/// ValueInfoProto, 9 in a NodeProto) is newer than the ONNX release the
/// importer is built with: protobuf keeps it as an unknown field, parsed here
/// by hand.
llvm::StringMap<std::string>
unknownMetadata(const google::protobuf::UnknownFieldSet &unknown, int field) {
  llvm::StringMap<std::string> props;
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &f = unknown.field(i);
    if (f.number() != field ||
        f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(f.length_delimited()))
      props[entry.key()] = entry.value();
  }
  return props;
}

llvm::StringMap<std::string> valueInfoMetadata(const onnx::ValueInfoProto &vi) {
  return unknownMetadata(vi.unknown_fields(), /*field=*/4);
}

/// Where in the user's PyTorch code a node comes from, as the dynamo
/// exporter records it (the torch op and the last frame of the stack
/// trace): " (from aten.index_put.default at model.py:100: `x[m] = 1`)", or
/// "" when the node carries no such metadata.
std::string torchOrigin(const onnx::NodeProto &node) {
  llvm::StringMap<std::string> props =
      unknownMetadata(node.unknown_fields(), /*field=*/9);
  std::string op;
  if (auto it = props.find("namespace"); it != props.end())
    op = StringRef(it->second).rsplit(": ").second.trim().str();
  std::string where;
  if (auto it = props.find("pkg.torch.onnx.stack_trace"); it != props.end()) {
    // Frames are `File "PATH", line N, in FUNC` followed by the code line;
    // the last frame is the model's own line.
    StringRef trace = it->second;
    size_t at = trace.rfind("File \"");
    if (at != StringRef::npos) {
      StringRef frame = trace.substr(at + 6);
      auto [path, rest] = frame.split('"');
      StringRef line = rest.drop_until([](char c) { return llvm::isDigit(c); })
                           .take_while([](char c) { return llvm::isDigit(c); });
      StringRef code = rest.split('\n').second.trim();
      where = llvm::sys::path::filename(path).str() + ":" + line.str();
      if (!code.empty())
        where += ": `" + code.str() + "`";
    }
  }
  if (op.empty() && where.empty())
    return "";
  std::string origin = " (from ";
  origin += op.empty() ? std::string("torch") : op;
  if (!where.empty())
    origin += " at " + where;
  return origin + ")";
}

/// True if `name` matches one of `patterns` as a whole (POSIX extended
/// regular expressions, validated by the caller).
bool matchesAny(llvm::StringRef name, llvm::ArrayRef<std::string> patterns) {
  return llvm::any_of(patterns, [&](const std::string &p) {
    return llvm::Regex("^(" + p + ")$").match(name);
  });
}

/// What a float initializer is to training.
enum class InitializerRole {
  /// A weight: an ml_program global that the optimizer updates.
  Parameter,
  /// A compile-time constant.
  Constant,
  /// A constant when all its elements are equal, else a parameter.
  ConstantIfSplat,
};

class ModelImporter {
public:
  ModelImporter(MLIRContext &ctx, const OnnxImportOptions &options)
      : ctx(ctx), options(options), builder(&ctx) {}

  /// Imports `model`. Unnamed nodes are given the name `#INDEX` so that
  /// diagnostics can point at them.
  OwningOpRef<ModuleOp> run(onnx::ModelProto &model);

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
  LogicalResult checkInputShapeOptions(const onnx::GraphProto &graph,
                                       const llvm::StringSet<> &initNames);
  /// Decides which float initializers are trainable parameters (the rest
  /// become compile-time constants); see the definition.
  void classifyInitializers(const onnx::GraphProto &graph);
  /// Gives each node using a shared float parameter its own copy, and
  /// BatchNorm running statistics constant copies; see the definition.
  void untieInitializers(onnx::GraphProto &graph);
  /// Replaces the exporter's `NAME = Identity(SHARED)` of a float
  /// initializer by a copy of it named NAME; see the definition.
  void foldInitializerIdentities(onnx::GraphProto &graph);
  LogicalResult importInitializer(const onnx::TensorProto &init,
                                  ImportContext &ic, ModuleOp module,
                                  OpBuilder &moduleBuilder);
  LogicalResult verifyModule(ModuleOp module, const onnx::GraphProto &graph,
                             int64_t opset);

  MLIRContext &ctx;
  const OnnxImportOptions &options;
  OpBuilder builder;
  /// Graph inputs with dynamic dims and no --input-shape, for diagnostics.
  std::vector<std::string> needShapes;
  /// What each float initializer is to training (classifyInitializers).
  llvm::StringMap<InitializerRole> roles;
  /// Float initializers imported as constants rather than parameters.
  std::vector<std::string> constantInitializers;
  /// Each untied initializer followed by its copies (untieInitializers).
  std::vector<SmallVector<std::string>> untied;
  /// The copies foldInitializerIdentities made of each initializer.
  std::map<std::string, SmallVector<std::string>> identityCopies;
  /// Parameters used by several nodes and kept tied
  /// (--keep-tied-initializers).
  std::vector<std::string> keptTied;
  /// Reads the tensors stored beside the model file.
  std::unique_ptr<ExternalData> externalData;
};

FailureOr<int64_t> ModelImporter::checkOpset(const onnx::ModelProto &model) {
  std::optional<int64_t> opset;
  for (const onnx::OperatorSetIdProto &id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx")
      opset = id.version();
  }
  if (!opset)
    return error(Twine("the model imports no default-domain (ai.onnx) "
                       "opset; ") +
                 kTorchReexport);
  if (*opset < kMinOpset || *opset > kMaxOpset)
    return error("ai.onnx opset " + Twine(*opset) + " is " +
                 (*opset < kMinOpset ? "older" : "newer") +
                 " than MegaGraph supports (opsets " + Twine(kMinOpset) + "-" +
                 Twine(kMaxOpset) + "); " + kTorchReexport +
                 (*opset > kMaxOpset
                      ? ", or convert the model with "
                        "onnx.version_converter.convert_version(model, 23)"
                      : ""));
  return *opset;
}

FailureOr<RankedTensorType>
ModelImporter::inputType(const onnx::ValueInfoProto &info) {
  const std::string &name = info.name();
  if (!info.type().has_tensor_type())
    return error("graph input '" + name +
                 "' is not a tensor (sequences, maps and optionals are not "
                 "supported)");
  const onnx::TypeProto_Tensor &tt = info.type().tensor_type();
  Type elem = convertElementType(&ctx, tt.elem_type());
  if (!elem)
    return error("graph input '" + name + "' has unsupported element type " +
                 elemTypeName(tt.elem_type()));
  SmallVector<int64_t> shape;
  auto it = options.inputShapes.find(name);
  if (it != options.inputShapes.end()) {
    const SmallVector<int64_t> &given = it->second;
    std::string flag = "--input-shape " + name + "=" + shapeToString(given);
    if (tt.has_shape() && tt.shape().dim_size() != (int)given.size())
      return error(flag + " has rank " + Twine(given.size()) +
                   ", but graph input '" + name + "' has rank " +
                   Twine(tt.shape().dim_size()) + " (" +
                   shapeTemplate(tt.shape()) + ")");
    for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
      const auto &dim = tt.shape().dim(i);
      if (dim.has_dim_value() && dim.dim_value() >= 0 &&
          dim.dim_value() != given[i])
        return error(flag + " contradicts graph input '" + name + "' (" +
                     shapeTemplate(tt.shape()) + "): dimension " + Twine(i) +
                     " is " + Twine(dim.dim_value()) + " in the model");
    }
    shape.assign(given.begin(), given.end());
  } else if (!tt.has_shape()) {
    return error("graph input '" + name + "' has no shape in the model; " +
                 "pass its static shape with --input-shape " + name +
                 "=D0xD1x...");
  } else if (!isStatic(tt.shape())) {
    std::string tmpl = shapeTemplate(tt.shape());
    std::string others;
    unsigned numOthers = 0;
    for (const std::string &other : needShapes)
      if (other != name) {
        others += (others.empty() ? "'" : ", '") + other + "'";
        ++numOthers;
      }
    return error("graph input '" + name + "' has a dynamic shape (" + tmpl +
                 "); pass --input-shape " + name + "=" + tmpl +
                 " with each <...> replaced by a size" +
                 (numOthers == 0   ? std::string()
                  : numOthers == 1 ? " (input " + others + " needs one too)"
                                   : " (inputs " + others + " need one too)"));
  } else {
    for (const auto &dim : tt.shape().dim())
      shape.push_back(dim.dim_value());
  }
  if (!checkedNumElements(shape))
    return error("graph input '" + name + "' is too large (" +
                 shapeToString(shape) + ")");
  return RankedTensorType::get(shape, elem);
}

LogicalResult
ModelImporter::checkInputShapeOptions(const onnx::GraphProto &graph,
                                      const llvm::StringSet<> &initNames) {
  std::string names;
  for (const onnx::ValueInfoProto &in : graph.input())
    if (!initNames.contains(in.name()))
      names += (names.empty() ? "'" : ", '") + in.name() + "'";
  // StringMap iteration order is unspecified: sort for a deterministic
  // diagnostic.
  SmallVector<StringRef> given;
  for (const auto &entry : options.inputShapes)
    given.push_back(entry.getKey());
  llvm::sort(given);
  auto isInput = [&](StringRef name) {
    return llvm::any_of(graph.input(), [&](const auto &in) {
      return in.name() == name && !initNames.contains(in.name());
    });
  };
  for (StringRef name : given) {
    if (isInput(name))
      continue;
    // The edge list that replaces a dense adj_norm (gt-sparse-adjacency,
    // given its E by megagraph-compile): not imported.
    if (name == abi::kEdgeIndex && isInput(abi::kAdjNorm))
      continue;
    if (initNames.contains(name))
      return error("--input-shape names '" + name +
                   "', which is an initializer (a weight), not a graph "
                   "input; graph inputs: " +
                   (names.empty() ? std::string("none") : names));
    return error("--input-shape names '" + name +
                 "', which is not a graph input; graph inputs: " +
                 (names.empty() ? std::string("none") : names));
  }
  for (const onnx::ValueInfoProto &in : graph.input())
    if (!initNames.contains(in.name()) &&
        !options.inputShapes.count(in.name()) && in.type().has_tensor_type() &&
        in.type().tensor_type().has_shape() &&
        !isStatic(in.type().tensor_type().shape()))
      needShapes.push_back(in.name());
  return success();
}

/// A float initializer is a trainable parameter when it is one of the
/// model's weights. Exporters also store constants as initializers (the
/// dynamo exporter lifts every scalar, 1/sqrt(d), GELU's sqrt(2), 0.5, and
/// folds `full_like(scores, -inf)` into a tensor); those must fold and raise
/// like Constant nodes, not be trained:
/// * the dynamo exporter records torch.export's kind of each initializer in
///   its value_info: PARAMETER is trained, BUFFER and CONSTANT_TENSOR are not;
/// * in such a model, an initializer without a kind was made by the
///   exporter's folding: one whose elements are all equal is a constant it
///   lifted or filled, any other a folded form of a parameter (a transposed
///   weight), which is trained;
/// * models without kinds (the TorchScript exporter) train every float
///   initializer;
/// * --freeze and --trainable (regular expressions over initializer names)
///   override the above, --trainable winning.
void ModelImporter::classifyInitializers(const onnx::GraphProto &graph) {
  llvm::StringMap<std::string> kinds;
  for (const onnx::ValueInfoProto &vi : graph.value_info()) {
    llvm::StringMap<std::string> props = valueInfoMetadata(vi);
    auto it = props.find(kTorchInputKindKey);
    if (it != props.end())
      kinds[vi.name()] = it->second;
  }
  for (const onnx::TensorProto &init : graph.initializer()) {
    Type elem = convertElementType(&ctx, init.data_type());
    if (!elem || !isa<FloatType>(elem))
      continue;
    InitializerRole role = InitializerRole::Parameter;
    auto kind = kinds.find(init.name());
    if (kind != kinds.end())
      role = kind->second == "PARAMETER" ? InitializerRole::Parameter
                                         : InitializerRole::Constant;
    else if (!kinds.empty())
      role = InitializerRole::ConstantIfSplat;
    if (matchesAny(init.name(), options.freezePatterns))
      role = InitializerRole::Constant;
    if (matchesAny(init.name(), options.trainablePatterns))
      role = InitializerRole::Parameter;
    roles[init.name()] = role;
  }
}

/// True if input `slot` of `node` is a running statistic (mean or
/// variance) of a BatchNorm: a buffer, which is never trained.
static bool isRunningStatistic(const onnx::NodeProto &node, int slot) {
  return node.op_type() == "BatchNormalization" && (slot == 3 || slot == 4);
}

/// The PyTorch attribute name of input `slot` of an op whose inputs are
/// module parameters ("weight", "bias", "running_mean", ...), or "".
static StringRef parameterSlotName(StringRef opType, int slot) {
  if (opType == "BatchNormalization") {
    static const char *names[] = {"", "weight", "bias", "running_mean",
                                  "running_var"};
    return slot < 5 ? names[slot] : "";
  }
  if (llvm::is_contained({"LayerNormalization", "InstanceNormalization",
                          "GroupNormalization", "RMSNormalization", "Conv",
                          "ConvTranspose", "Gemm"},
                         opType))
    return slot == 1 ? "weight" : slot == 2 ? "bias" : "";
  return "";
}

/// A node's name as part of a parameter name: '/' written '.' (parameter
/// names become file names), and an unnamed node (named "#INDEX" by the
/// importer) called "OPTYPE_INDEX".
static std::string nodeLabel(const onnx::NodeProto &node) {
  StringRef name = node.name();
  if (name.starts_with("#"))
    return node.op_type() + "_" + name.drop_front().str();
  std::string label = name.ltrim('/').str();
  std::replace(label.begin(), label.end(), '/', '.');
  return label;
}

/// The name of the copy of initializer `init` that `node` uses at `slot`.
/// TorchScript names a node after the module that runs it
/// ("/layers.1/norm/LayerNormalization"): the copy is that module's
/// parameter, "layers.1.norm.weight", its attribute taken from the op's
/// input (LayerNorm's scale is "weight") or from `init`'s own name. Other
/// copies are named "INIT@NODE" (nodeLabel), or "INIT@NODE.ATTR" where the
/// op's input has a PyTorch name.
static std::string untiedName(StringRef init, const onnx::NodeProto &node,
                              int slot) {
  StringRef nodeName = node.name();
  size_t lastSlash = nodeName.rfind('/');
  std::string scope;
  if (nodeName.starts_with("/") && lastSlash != StringRef::npos &&
      lastSlash > 0)
    scope = nodeName.substr(1, lastSlash - 1).str();
  std::replace(scope.begin(), scope.end(), '/', '.');
  StringRef slotName = parameterSlotName(node.op_type(), slot);
  StringRef attr = slotName;
  if (attr.empty() && init.contains('.') && !init.contains("::"))
    attr = init.rsplit('.').second;
  if (!scope.empty() && !attr.empty())
    return scope + "." + attr.str();
  return init.str() + "@" + nodeLabel(node) +
         (slotName.empty() ? "" : "." + slotName.str());
}

/// The TorchScript exporter (torch 1.13) keeps one initializer per distinct
/// value and gives each other parameter of that value an Identity node
/// from the kept one: `blocks.1.norm.weight = Identity(
/// blocks.0.norm.weight)`. Each such Identity becomes an initializer of its
/// own, named after the parameter (so classifyInitializers, --freeze and
/// --trainable see that name), unless --keep-tied-initializers. An
/// Identity named by the exporter ("onnx::Expand_490") stays: it is a
/// second folded form of one parameter (Graphormer's virtual distance,
/// `w.view(1, 1, 1, 1)` twice), which must stay one. Identities that feed
/// a BatchNorm's running statistics are folded in any case, as those are
/// buffers (untieInitializers makes them constants).
void ModelImporter::foldInitializerIdentities(onnx::GraphProto &graph) {
  llvm::StringMap<int> initIndex;
  for (auto [i, init] : llvm::enumerate(graph.initializer()))
    if (isa_and_nonnull<FloatType>(convertElementType(&ctx, init.data_type())))
      initIndex[init.name()] = i;
  llvm::StringSet<> runningStatistics;
  for (const onnx::NodeProto &node : graph.node())
    for (auto [slot, name] : llvm::enumerate(node.input()))
      if (isRunningStatistic(node, slot))
        runningStatistics.insert(name);
  SmallVector<int> folded;
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    if (node.op_type() != "Identity" || node.input_size() != 1 ||
        node.output_size() != 1 || !initIndex.count(node.input(0)) ||
        initIndex.count(node.output(0)))
      continue;
    bool untie = !options.keepTiedInitializers &&
                 !StringRef(node.output(0)).contains("::");
    if (!untie && !runningStatistics.contains(node.output(0)))
      continue;
    onnx::TensorProto copy = graph.initializer(initIndex[node.input(0)]);
    copy.set_name(node.output(0));
    *graph.add_initializer() = std::move(copy);
    identityCopies[node.input(0)].push_back(node.output(0));
    folded.push_back(i);
  }
  for (int i : llvm::reverse(folded))
    graph.mutable_node()->DeleteSubrange(i, 1);
}

/// The PyTorch module that runs `node`, as far as its name tells: the
/// module path of a TorchScript name ("/layers.0/norm/LayerNormalization"
/// -> "/layers.0/norm", "/Add" -> ""), the node itself when it is unnamed
/// ("#INDEX"), else unknown, taken for the top-level module ("").
static std::string moduleOf(const onnx::NodeProto &node) {
  StringRef name = node.name();
  if (name.starts_with("#"))
    return name.str();
  if (!name.starts_with("/"))
    return "";
  return name.substr(0, name.rfind('/')).str();
}

/// The TorchScript exporter stores one initializer per distinct value, so
/// parameters that start equal (LayerNorm weights of ones, zero biases, a
/// BatchNorm's running mean and a bias) reach the importer as one tensor
/// used by several nodes. Training it as one parameter diverges from the
/// PyTorch module, so:
/// * each module using a float parameter (moduleOf its nodes) gets its own
///   copy (untiedName), the first keeping the original name unless another
///   one's copy would carry it. Nodes of one module share their copy: a
///   parameter that one module's forward uses twice (Graphormer's virtual
///   distance, added to a row and a column of the attention bias) is one
///   initializer used by two of its nodes; --keep-tied-initializers keeps
///   one parameter for all modules (weights tied on purpose, as an
///   embedding and an output projection);
/// * a BatchNorm's running statistics are buffers: their uses get a
///   constant copy, whatever --trainable says.
/// Constants and integer initializers stay shared. --freeze and
/// --trainable apply to the copies' names as well.
void ModelImporter::untieInitializers(onnx::GraphProto &graph) {
  // 1. The nodes using each float initializer, and whether each use is a
  //    running statistic; a node's uses of one kind form one group.
  struct Use {
    int node;
    SmallVector<int, 1> slots;
    bool buffer;
  };
  llvm::StringMap<SmallVector<Use>> uses;
  llvm::StringSet<> taken;
  for (const onnx::TensorProto &init : graph.initializer())
    taken.insert(init.name());
  for (const onnx::ValueInfoProto &in : graph.input())
    taken.insert(in.name());
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    for (const std::string &out : node.output())
      taken.insert(out);
    for (auto [slot, name] : llvm::enumerate(node.input())) {
      if (!roles.count(name))
        continue;
      bool buffer = isRunningStatistic(node, slot);
      SmallVector<Use> &list = uses[name];
      auto it = llvm::find_if(list, [&](const Use &u) {
        return u.node == (int)i && u.buffer == buffer;
      });
      if (it == list.end())
        list.push_back(Use{(int)i, {(int)slot}, buffer});
      else
        it->slots.push_back(slot);
    }
  }

  // 2. Per initializer, in file order: which groups get a copy.
  int numOriginal = graph.initializer_size();
  for (int index = 0; index < numOriginal; ++index) {
    std::string name = graph.initializer(index).name();
    auto found = uses.find(name);
    if (found == uses.end())
      continue;
    SmallVector<Use> &list = found->second;
    // Read, not referenced: adding the copies' roles may move the entries.
    InitializerRole role = roles.lookup(name);
    bool trained = llvm::any_of(list, [](const Use &u) { return !u.buffer; });
    if (!trained) {
      roles[name] = InitializerRole::Constant;
      continue;
    }
    if (role == InitializerRole::Constant)
      continue;
    // Groups of uses that share one tensor: the buffer uses, and the
    // parameter uses (one group each unless kept tied or not a plain
    // parameter).
    bool untie =
        !options.keepTiedInitializers && role == InitializerRole::Parameter;
    SmallVector<SmallVector<const Use *>> groups;
    SmallVector<const Use *> bufferUses, paramUses;
    for (const Use &u : list)
      (u.buffer ? bufferUses : paramUses).push_back(&u);
    if (untie) {
      llvm::StringMap<unsigned> groupOfModule;
      for (const Use *u : paramUses) {
        auto [it, isNew] = groupOfModule.try_emplace(
            moduleOf(graph.node(u->node)), groups.size());
        if (isNew)
          groups.push_back({u});
        else
          groups[it->second].push_back(u);
      }
    } else {
      groups.push_back(paramUses);
    }
    if (!untie && paramUses.size() > 1 && role == InitializerRole::Parameter)
      keptTied.push_back(name);
    if (!bufferUses.empty())
      groups.push_back(bufferUses);
    if (groups.size() == 1)
      continue;
    // The group keeping the original name: the parameter group whose copy
    // would be named so, else the first (a parameter group, as the buffer
    // group comes last).
    auto nameOf = [&](const SmallVector<const Use *> &group) {
      const Use &first = *group.front();
      return untiedName(name, graph.node(first.node), first.slots.front());
    };
    unsigned keep = 0;
    for (auto [g, group] : llvm::enumerate(groups))
      if (!group.front()->buffer && nameOf(group) == name) {
        keep = g;
        break;
      }
    SmallVector<std::string> copies{name};
    for (auto [g, group] : llvm::enumerate(groups)) {
      if (g == keep)
        continue;
      std::string copyName = nameOf(group);
      if (taken.contains(copyName))
        copyName = name + "@" + nodeLabel(graph.node(group.front()->node));
      for (int k = 2; taken.contains(copyName); ++k)
        copyName = name + "@" + std::to_string(k);
      taken.insert(copyName);
      onnx::TensorProto copy = graph.initializer(index);
      copy.set_name(copyName);
      *graph.add_initializer() = std::move(copy);
      for (const Use *u : group)
        for (int slot : u->slots)
          graph.mutable_node(u->node)->set_input(slot, copyName);
      InitializerRole copyRole = role;
      if (matchesAny(copyName, options.freezePatterns))
        copyRole = InitializerRole::Constant;
      if (matchesAny(copyName, options.trainablePatterns))
        copyRole = InitializerRole::Parameter;
      if (group.front()->buffer)
        copyRole = InitializerRole::Constant;
      else if (copyRole == InitializerRole::Parameter)
        copies.push_back(copyName);
      roles[copyName] = copyRole;
    }
    if (copies.size() > 1)
      untied.push_back(std::move(copies));
  }

  // 3. The trained copies of foldInitializerIdentities, for the report.
  for (auto &[name, folded] : identityCopies) {
    auto entry = llvm::find_if(untied, [&, &name = name](const auto &names) {
      return names.front() == name;
    });
    if (entry == untied.end()) {
      untied.push_back({name});
      entry = std::prev(untied.end());
    }
    for (const std::string &copy : folded)
      if (roles.lookup(copy) == InitializerRole::Parameter)
        entry->push_back(copy);
    if (entry->size() == 1)
      untied.erase(entry);
  }
}

/// True if every element of `c` has the same value.
static bool isSplatTensor(const ConstTensor &c) {
  for (int64_t i = 1, n = c.numElements(); i < n; ++i)
    if (c.getDouble(i) != c.getDouble(0))
      return false;
  return true;
}

LogicalResult ModelImporter::importInitializer(const onnx::TensorProto &init,
                                               ImportContext &ic,
                                               ModuleOp module,
                                               OpBuilder &moduleBuilder) {
  SmallVector<int64_t> dims(init.dims().begin(), init.dims().end());
  if (!checkedNumElements(dims)) {
    SmallVector<std::string> dimStrings;
    for (int64_t d : dims)
      dimStrings.push_back(std::to_string(d));
    return error("initializer tensor '" + init.name() +
                 "' has an invalid shape [" + llvm::join(dimStrings, ", ") +
                 "] (negative or too large dimensions; file corrupt?)");
  }
  std::string err;
  FailureOr<ConstTensor> c =
      readTensorProto(&ctx, init, err, externalData.get());
  if (failed(c))
    return error("initializer " + err);
  InitializerRole role = roles.lookup(init.name());
  if (c->isFloat() &&
      (role == InitializerRole::Constant ||
       (role == InitializerRole::ConstantIfSplat && isSplatTensor(*c))))
    constantInitializers.push_back(init.name());
  else if (c->isFloat())
    role = InitializerRole::Parameter;
  if (!c->isFloat() || role != InitializerRole::Parameter) {
    // Integer initializers are shapes, indices and axes, and float ones
    // that are not weights are constants: keep both as compile-time
    // constants so that shape arithmetic folds and patterns see them.
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

LogicalResult ModelImporter::verifyModule(ModuleOp module,
                                          const onnx::GraphProto &graph,
                                          int64_t opset) {
  // Keep the verifier's first message, but as one diagnostic that names the
  // node whose ops are invalid and says this is an importer bug rather than
  // a problem of the model.
  std::string message, where;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error || !message.empty())
        return success();
      message = diag.str();
      if (auto name = dyn_cast<NameLoc>(diag.getLocation())) {
        StringRef nodeName = name.getName().getValue();
        where = "at '" + nodeName.str() + "'";
        for (const onnx::NodeProto &node : graph.node())
          if (node.name() == nodeName) {
            where = "node '" + node.name() + "' (" + node.op_type() +
                    ", opset " + std::to_string(opset) + ")";
            break;
          }
      }
      return success();
    });
    result = verify(module);
  }
  if (failed(result))
    return error((where.empty() ? std::string() : where + ": ") +
                 "internal error: the imported ops do not verify (" + message +
                 "); please report this model");
  return success();
}

OwningOpRef<ModuleOp> ModelImporter::run(onnx::ModelProto &model) {
  FailureOr<int64_t> opset = checkOpset(model);
  if (failed(opset))
    return nullptr;
  onnx::GraphProto &graph = *model.mutable_graph();
  if (graph.output_size() == 0) {
    (void)error("the graph has no outputs; there is nothing to compile");
    return nullptr;
  }
  if (graph.sparse_initializer_size() > 0) {
    (void)error("initializer '" + graph.sparse_initializer(0).values().name() +
                "' is sparse; sparse initializers are not supported "
                "(re-export with dense weights)");
    return nullptr;
  }
  for (auto [i, node] : llvm::enumerate(*graph.mutable_node()))
    if (node.name().empty())
      node.set_name("#" + std::to_string(i));
  // The ONNX checker's model-level rules, before anything is read.
  if (std::string problem = checkModelStructure(model); !problem.empty()) {
    (void)error(problem);
    return nullptr;
  }

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
  if (failed(checkInputShapeOptions(graph, initNames)))
    return nullptr;
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
    func.setArgAttr(i, gt::kTensorNameAttr, builder.getStringAttr(name));
    ic.tensors[name] = TensorInfo{body->getArgument(i), std::nullopt};
  }

  // 2. Initializers. Globals go before @main. Data stored outside the
  //    model file is read relative to the model's directory.
  std::string dataDir = options.externalDataDir;
  if (dataDir.empty() && !StringRef(options.fileName).starts_with("<")) {
    dataDir = llvm::sys::path::parent_path(options.fileName).str();
    if (dataDir.empty())
      dataDir = ".";
  }
  externalData = std::make_unique<ExternalData>(dataDir);
  ic.external = externalData.get();
  foldInitializerIdentities(graph);
  classifyInitializers(graph);
  untieInitializers(graph);
  moduleBuilder.setInsertionPoint(func);
  for (const onnx::TensorProto &init : graph.initializer())
    if (failed(importInitializer(init, ic, *module, moduleBuilder)))
      return nullptr;
  // The float initializers taken for constants, for the compile report.
  if (!constantInitializers.empty()) {
    llvm::sort(constantInitializers);
    SmallVector<Attribute> attrs;
    for (const std::string &name : constantInitializers)
      attrs.push_back(builder.getStringAttr(name));
    (*module)->setAttr("gt.onnx_constants", builder.getArrayAttr(attrs));
  }
  // The shared initializers, untied (each followed by its copies) or kept
  // tied, for the compile report.
  if (!untied.empty()) {
    SmallVector<Attribute> attrs;
    for (const SmallVector<std::string> &names : untied)
      attrs.push_back(builder.getStrArrayAttr(llvm::to_vector(llvm::map_range(
          names, [](const std::string &n) { return StringRef(n); }))));
    (*module)->setAttr("gt.onnx_untied", builder.getArrayAttr(attrs));
  }
  if (!keptTied.empty())
    (*module)->setAttr(
        "gt.onnx_tied",
        builder.getStrArrayAttr(llvm::to_vector(llvm::map_range(
            keptTied, [](const std::string &n) { return StringRef(n); }))));

  // 3. Nodes, in graph order. A handler reports its own failure; keep only
  //    its first error (a failing input lookup followed by the handler's own
  //    message would otherwise print two), and make sure there is one.
  unsigned numErrors = 0;
  ScopedDiagnosticHandler firstErrorOnly(&ctx, [&](Diagnostic &diag) {
    // Returning failure passes the diagnostic on to the driver's handler:
    // do so for notes and warnings and for the first error; drop the rest.
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    return success(numErrors++ > 0);
  });
  llvm::StringMap<OpHandler> &handlers = getOpHandlers();
  for (const onnx::NodeProto &node : graph.node()) {
    ic.node = &node;
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      (void)ic.fail("op '" + node.op_type() + "' of custom domain '" +
                    node.domain() +
                    "' is not supported; export the model with standard "
                    "ONNX (ai.onnx) ops only");
      return nullptr;
    }
    auto it = handlers.find(node.op_type());
    if (it == handlers.end()) {
      (void)ic.fail(
          "this op is not supported" + torchOrigin(node) +
          ". On the torch side, write that computation with ops that "
          "megagraph-compile --list-onnx-ops lists, or re-export with the "
          "other exporter (torch.onnx.export(..., dynamo=False, "
          "opset_version=17), or dynamo=True), which may map it to "
          "supported ops");
      return nullptr;
    }
    if (int64_t since = introducedIn(node.op_type()); since > *opset) {
      (void)ic.fail("this op is part of ai.onnx only since opset " +
                    Twine(since) + ", but the model imports opset " +
                    Twine(*opset) +
                    "; re-export with torch.onnx.export(..., opset_version=" +
                    Twine(std::max<int64_t>(since, 18)) + ")");
      return nullptr;
    }
    if (std::string problem = checkNodeSchema(node, *opset); !problem.empty()) {
      (void)ic.fail(problem);
      return nullptr;
    }
    if (failed(it->second(ic, node))) {
      if (numErrors == 0)
        (void)ic.fail("could not be imported (internal error: no diagnostic "
                      "was given); please report this model");
      return nullptr;
    }
    for (const std::string &out : node.output())
      if (!out.empty() && !ic.tensors.count(out)) {
        (void)ic.fail("output '" + out +
                      "' is not produced by this importer (unsupported "
                      "optional output)");
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
      (void)error("graph output '" + out.name() +
                  "' is not produced by any node, graph input or "
                  "initializer");
      return nullptr;
    }
    if (!it->second.value)
      it->second.value = ic.materialize(*it->second.constant);
    // The model's declared output type, where it states one, must agree
    // with what the importer computed: a mismatch is an importer bug or a
    // wrong --input-shape, never something to pass on silently.
    auto computed = cast<RankedTensorType>(it->second.value.getType());
    if (out.type().has_tensor_type()) {
      const onnx::TypeProto_Tensor &tt = out.type().tensor_type();
      Type declared = convertElementType(&ctx, tt.elem_type());
      bool mismatch = declared && declared != computed.getElementType();
      if (tt.has_shape() && tt.shape().dim_size() != computed.getRank())
        mismatch = true;
      for (int d = 0; !mismatch && tt.has_shape() && d < tt.shape().dim_size();
           ++d)
        if (tt.shape().dim(d).has_dim_value() &&
            tt.shape().dim(d).dim_value() != computed.getDimSize(d))
          mismatch = true;
      if (mismatch) {
        std::string got;
        llvm::raw_string_ostream os(got);
        os << computed;
        (void)error("graph output '" + out.name() +
                    "' is declared with a "
                    "different type than the importer computed (" +
                    got +
                    "); check the --input-shape values, or report this "
                    "model");
        return nullptr;
      }
    }
    results.push_back(it->second.value);
    resultTypes.push_back(it->second.value.getType());
  }
  func::ReturnOp::create(builder, fileLoc(), results);
  func.setType(builder.getFunctionType(argTypes, resultTypes));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, gt::kTensorNameAttr,
                       builder.getStringAttr(out.name()));

  if (failed(verifyModule(*module, graph, *opset)))
    return nullptr;
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
  name = name.trim();
  dims = dims.trim();
  if (name.empty() || dims.empty() || !spec.contains('=')) {
    error = "--input-shape expects NAME=D0xD1x... (e.g. x=4096x128), got '" +
            spec.str() + "'";
    return failure();
  }
  SmallVector<int64_t> shape;
  if (dims != "scalar") {
    SmallVector<StringRef> parts;
    dims.split(parts, 'x');
    for (StringRef p : parts) {
      uint64_t d;
      if (p.getAsInteger(10, d) || d == 0 || d > (uint64_t(1) << 40)) {
        error = "--input-shape " + spec.str() + ": " +
                (p.empty() ? std::string("empty dimension")
                           : "'" + p.str() + "' is not a dimension size") +
                " (expected positive integers: NAME=D0xD1x..., e.g. "
                "x=4096x128)";
        return failure();
      }
      shape.push_back(static_cast<int64_t>(d));
    }
  }
  if (!options.inputShapes.try_emplace(name, shape).second) {
    error = "--input-shape is given twice for '" + name.str() + "'";
    return failure();
  }
  return success();
}

LogicalResult megagraph::checkInitializerPattern(StringRef flag,
                                                 StringRef pattern,
                                                 std::string &error) {
  std::string why;
  if (pattern.empty() ||
      !llvm::Regex("^(" + pattern.str() + ")$").isValid(why)) {
    error = "--" + flag.str() + " '" + pattern.str() +
            "' is not a valid regular expression" +
            (why.empty() ? std::string(" (it is empty)") : " (" + why + ")") +
            "; it is matched against whole initializer names, e.g. "
            "'layers\\.0\\..*'";
    return failure();
  }
  return success();
}

void megagraph::loadOnnxImportDialects(MLIRContext &context) {
  context.loadDialect<gt::GTDialect, func::FuncDialect, linalg::LinalgDialect,
                      ml_program::MLProgramDialect, tensor::TensorDialect,
                      tosa::TosaDialect>();
}

OwningOpRef<ModuleOp>
megagraph::importOnnxModel(MLIRContext &context, StringRef bytes,
                           const OnnxImportOptions &options) {
  loadOnnxImportDialects(context);
  Location fileLoc = FileLineColLoc::get(&context, options.fileName, 0, 0);
  if (bytes.empty()) {
    emitError(fileLoc) << "not a valid ONNX model: the file is empty";
    return nullptr;
  }
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    emitError(fileLoc) << "not a valid ONNX model: the file is larger than "
                          "2 GiB, which protobuf cannot read";
    return nullptr;
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      !model.has_graph()) {
    emitError(fileLoc)
        << "not a valid ONNX model: the protobuf could not be parsed (the "
           "file is truncated, corrupt, or not ONNX; ONNX text files must "
           "end in .onnxtxt)";
    return nullptr;
  }
  return ModelImporter(context, options).run(model);
}

namespace {

/// The ONNX text parser with access to where it stopped, for diagnostics.
class TextParser : public onnx::OnnxParser {
public:
  explicit TextParser(const char *text) : onnx::OnnxParser(text) {}

  const char *begin() const { return start_; }
  const char *position() const { return next_; }
  /// 1-based line and column of `p`.
  std::pair<unsigned, unsigned> lineColumn(const char *p) const {
    unsigned line = 1, column = 1;
    for (const char *c = start_; c < p && c < end_; ++c) {
      if (*c == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return {line, column};
  }
  /// The text of the line containing `p`, trimmed and shortened.
  std::string lineAt(const char *p) const {
    if (p > end_)
      p = end_;
    const char *b = p, *e = p;
    while (b > start_ && b[-1] != '\n')
      --b;
    while (e < end_ && *e != '\n')
      ++e;
    std::string line = StringRef(b, e - b).trim().str();
    if (line.size() > 60)
      line = line.substr(0, 57) + "...";
    return line;
  }
};

/// The text parse in progress, for the terminate handler below.
struct ActiveTextParse {
  MLIRContext *context;
  const std::string *fileName;
  const TextParser *parser;
};
ActiveTextParse *activeTextParse = nullptr;

/// onnx::OnnxParser (ONNX 1.12) converts numeric literals with std::stoll /
/// std::stof, which throw on a lone '-' or an out-of-range value. This file
/// is built without exceptions, so nothing can catch them: report the
/// position as a normal diagnostic and exit instead of aborting.
[[noreturn]] void onTextParserException() {
  ActiveTextParse *active = activeTextParse;
  if (!active) {
    llvm::errs() << "error: unexpected C++ exception\n";
    std::_Exit(70);
  }
  const TextParser &parser = *active->parser;
  // The literal just read ends at the parser's position.
  const char *end = parser.position();
  const char *begin = end;
  while (begin > parser.begin() &&
         StringRef("0123456789.+-eE").contains(begin[-1]))
    --begin;
  auto [line, column] = parser.lineColumn(begin);
  std::string literal(begin, end - begin);
  emitError(
      FileLineColLoc::get(active->context, *active->fileName, line, column))
      << "not a valid ONNX text model: "
      << (literal.empty()
              ? std::string("a number was expected")
              : "malformed or out-of-range number '" + literal + "'")
      << " (in '" << parser.lineAt(begin) << "')";
  llvm::errs().flush();
  std::_Exit(1);
}

/// True if `text` holds nothing but whitespace and '#' comments.
bool isBlankText(StringRef text) {
  while (true) {
    text = text.ltrim();
    if (!text.starts_with("#"))
      return text.empty();
    text = text.drop_until([](char c) { return c == '\n'; });
  }
}

} // namespace

OwningOpRef<ModuleOp>
megagraph::importOnnxText(MLIRContext &context, StringRef text,
                          const OnnxImportOptions &options) {
  loadOnnxImportDialects(context);
  if (isBlankText(text)) {
    emitError(FileLineColLoc::get(&context, options.fileName, 0, 0))
        << "not a valid ONNX text model: the file is empty";
    return nullptr;
  }
  onnx::ModelProto model;
  std::string buffer = text.str();
  TextParser parser(buffer.c_str());
  ActiveTextParse active{&context, &options.fileName, &parser};
  activeTextParse = &active;
  std::terminate_handler previous = std::set_terminate(onTextParserException);
  onnx::Common::Status status = parser.Parse(model);
  std::set_terminate(previous);
  activeTextParse = nullptr;
  if (!status.IsOK()) {
    // The message is "[ParseError at position (...)]\nError context: ...\n
    // MESSAGE"; keep MESSAGE, and give the position as the location.
    StringRef message = StringRef(status.ErrorMessage()).rsplit('\n').second;
    message = message.trim().rtrim('.');
    std::string what = message.str();
    if (!what.empty())
      what[0] = llvm::toLower(what[0]);
    auto [line, column] = parser.lineColumn(parser.position());
    std::string near = parser.lineAt(parser.position());
    InFlightDiagnostic diag =
        emitError(FileLineColLoc::get(&context, options.fileName, line, column))
        << "not a valid ONNX text model: ";
    if (isBlankText(StringRef(parser.position())))
      diag << "unexpected end of file (" << what << "; is a '}' or '>' "
           << "missing?)";
    else
      diag << what << (near.empty() ? std::string() : " (in '" + near + "')");
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
    registerIndexingOps(h);
    registerAttentionOps(h);
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
