//===- OnnxChecker.cpp - The ONNX checker's rules at import -----*- C++ -*-===//
//
// Part of MegaGraph. Node schemas come from ONNX's own registry
// (onnx::OpSchemaRegistry) of the ONNX release the importer is built with
// (1.12, which knows ai.onnx up to opset 17). The importer reads opsets up to
// 23: the schema changes after the registry's newest opset, for the ops the
// importer implements, are applied from a table of revisions taken from the
// ONNX specification.
//
//===----------------------------------------------------------------------===//

#include "OnnxChecker.h"

#include "onnx/defs/schema.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <cstdio>
#include <limits>
#include <map>
#include <optional>

using namespace megagraph::onnx_import;
using llvm::StringRef;
using AttrType = onnx::AttributeProto::AttributeType;

namespace {

/// What the checker needs of an op's schema.
struct OpSignature {
  int minInputs = 0, maxInputs = 0, minOutputs = 0, maxOutputs = 0;
  /// Attribute name -> (type, required).
  std::map<std::string, std::pair<AttrType, bool>> attributes;
  /// The opset version that introduced this signature.
  int sinceVersion = 0;
};

/// An attribute of a schema revision: name, type, required.
struct AttrSpec {
  const char *name;
  AttrType type;
  bool required;
};

/// A change of an op's schema in an opset newer than the registry knows.
/// A revision with `replace` set is a whole new signature (a new op); else
/// it edits the previous one: inputs and outputs bounds where >= 0,
/// attributes added and removed.
struct SchemaRevision {
  const char *op;
  int since;
  bool replace;
  int minInputs, maxInputs, minOutputs, maxOutputs;
  llvm::ArrayRef<AttrSpec> added;
  llvm::ArrayRef<const char *> removed;
};

/// The newest ai.onnx opset of the revisions below.
constexpr int64_t kNewestOpset = 23;
constexpr int kUnbounded = std::numeric_limits<int>::max();
constexpr AttrType kInt = onnx::AttributeProto::INT;
constexpr AttrType kFloat = onnx::AttributeProto::FLOAT;
constexpr AttrType kString = onnx::AttributeProto::STRING;

const AttrSpec kReduce18Added[] = {{"noop_with_empty_axes", kInt, false}};
const char *const kReduce18Removed[] = {"axes"};
const AttrSpec kSplit18Added[] = {{"num_outputs", kInt, false}};
const AttrSpec kCast19Added[] = {{"saturate", kInt, false}};
const AttrSpec kGelu20[] = {{"approximate", kString, false}};
const AttrSpec kAttention23[] = {
    {"is_causal", kInt, false},        {"kv_num_heads", kInt, false},
    {"q_num_heads", kInt, false},      {"qk_matmul_output_mode", kInt, false},
    {"scale", kFloat, false},          {"softcap", kFloat, false},
    {"softmax_precision", kInt, false}};
const AttrSpec kRMSNormalization23[] = {{"axis", kInt, false},
                                        {"epsilon", kFloat, false},
                                        {"stash_type", kInt, false}};

#define MG_REDUCE18(NAME)                                                      \
  SchemaRevision {                                                             \
    NAME, 18, false, 1, 2, -1, -1, kReduce18Added, kReduce18Removed            \
  }

/// The ai.onnx schema changes of opsets 18-23 that affect attributes or
/// arity, for the ops the importer implements (ReduceSum moved its axes to
/// an input in opset 13 already).
const SchemaRevision kRevisions[] = {
    {"Mish", 18, true, 1, 1, 1, 1, {}, {}},
    MG_REDUCE18("ReduceL1"),
    MG_REDUCE18("ReduceL2"),
    MG_REDUCE18("ReduceLogSum"),
    MG_REDUCE18("ReduceLogSumExp"),
    MG_REDUCE18("ReduceMax"),
    MG_REDUCE18("ReduceMean"),
    MG_REDUCE18("ReduceMin"),
    MG_REDUCE18("ReduceProd"),
    MG_REDUCE18("ReduceSumSquare"),
    {"Pad", 18, false, -1, 4, -1, -1, {}, {}},
    {"Split", 18, false, -1, -1, -1, -1, kSplit18Added, {}},
    {"Cast", 19, false, -1, -1, -1, -1, kCast19Added, {}},
    {"Gelu", 20, true, 1, 1, 1, 1, kGelu20, {}},
    {"Attention", 23, true, 3, 6, 1, 4, kAttention23, {}},
    {"RMSNormalization", 23, true, 2, 2, 1, 1, kRMSNormalization23, {}},
};

#undef MG_REDUCE18

/// The newest ai.onnx opset the registry has schemas for.
int registryMaxOpset() {
  const auto &map =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

/// The signature of ai.onnx op `op` at `opset`, or nullopt if there is none.
std::optional<OpSignature> signatureOf(const std::string &op, int64_t opset) {
  int known = registryMaxOpset();
  std::optional<OpSignature> sig;
  if (const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
          op, static_cast<int>(std::min<int64_t>(opset, known)))) {
    sig.emplace();
    sig->minInputs = schema->min_input();
    sig->maxInputs = schema->max_input();
    sig->minOutputs = schema->min_output();
    sig->maxOutputs = schema->max_output();
    sig->sinceVersion = schema->SinceVersion();
    for (const auto &[name, attr] : schema->attributes())
      sig->attributes[name] = {attr.type, attr.required};
  }
  for (const SchemaRevision &rev : kRevisions) {
    if (op != rev.op || rev.since <= known || rev.since > opset)
      continue;
    if (rev.replace) {
      sig.emplace();
    } else if (!sig) {
      continue;
    }
    auto bound = [](int &field, int value) {
      if (value >= 0)
        field = value;
    };
    bound(sig->minInputs, rev.minInputs);
    bound(sig->maxInputs, rev.maxInputs);
    bound(sig->minOutputs, rev.minOutputs);
    bound(sig->maxOutputs, rev.maxOutputs);
    for (const char *name : rev.removed)
      sig->attributes.erase(name);
    for (const AttrSpec &a : rev.added)
      sig->attributes[a.name] = {a.type, a.required};
    sig->sinceVersion = rev.since;
  }
  return sig;
}

std::string typeName(AttrType type) {
  return onnx::AttributeProto_AttributeType_Name(type);
}

/// The kinds of value `attr` holds, by the fields that are set.
llvm::SmallVector<AttrType, 2> populatedKinds(const onnx::AttributeProto &a) {
  llvm::SmallVector<AttrType, 2> kinds;
  auto add = [&](bool present, AttrType type) {
    if (present)
      kinds.push_back(type);
  };
  add(a.has_f(), onnx::AttributeProto::FLOAT);
  add(a.has_i(), onnx::AttributeProto::INT);
  add(a.has_s(), onnx::AttributeProto::STRING);
  add(a.has_t(), onnx::AttributeProto::TENSOR);
  add(a.has_g(), onnx::AttributeProto::GRAPH);
  add(a.has_sparse_tensor(), onnx::AttributeProto::SPARSE_TENSOR);
  add(a.has_tp(), onnx::AttributeProto::TYPE_PROTO);
  add(a.floats_size() > 0, onnx::AttributeProto::FLOATS);
  add(a.ints_size() > 0, onnx::AttributeProto::INTS);
  add(a.strings_size() > 0, onnx::AttributeProto::STRINGS);
  add(a.tensors_size() > 0, onnx::AttributeProto::TENSORS);
  add(a.graphs_size() > 0, onnx::AttributeProto::GRAPHS);
  add(a.sparse_tensors_size() > 0, onnx::AttributeProto::SPARSE_TENSORS);
  add(a.type_protos_size() > 0, onnx::AttributeProto::TYPE_PROTOS);
  return kinds;
}

/// " (VALUE)" for a scalar attribute's value, for diagnostics.
std::string shownValue(const onnx::AttributeProto &a, AttrType type) {
  switch (type) {
  case onnx::AttributeProto::FLOAT: {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%g", a.f());
    return " (" + std::string(buffer) + ")";
  }
  case onnx::AttributeProto::INT:
    return " (" + std::to_string(a.i()) + ")";
  case onnx::AttributeProto::STRING: {
    std::string s = a.s().size() > 40 ? a.s().substr(0, 37) + "..." : a.s();
    return " ('" + s + "')";
  }
  default:
    return "";
  }
}

/// "a" or "an" before a type name.
std::string withArticle(const std::string &type) {
  bool vowel = !type.empty() && StringRef("AEIOUaeiou").contains(type.front());
  return (vowel ? "an " : "a ") + type;
}

std::string nodeWhere(const onnx::NodeProto &node) {
  return "node '" + node.name() + "' (" + node.op_type() + ")";
}

/// "[2, 3]" for initializer dims.
std::string dimsString(llvm::ArrayRef<int64_t> dims) {
  llvm::SmallVector<std::string> parts;
  for (int64_t d : dims)
    parts.push_back(std::to_string(d));
  return "[" + llvm::join(parts, ", ") + "]";
}

std::string elemTypeName(int32_t code) {
  if (onnx::TensorProto_DataType_IsValid(code))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(code));
  return "code " + std::to_string(code);
}

/// The problem with graph input `in`, which is also initializer `init`, or
/// "" when they agree on element type and (where `in` states it) shape.
std::string checkInputMatchesInitializer(const onnx::ValueInfoProto &in,
                                         const onnx::TensorProto &init) {
  if (!in.type().has_tensor_type())
    return "graph input '" + in.name() +
           "' is also an initializer (a tensor) but is declared as another "
           "kind of value";
  const onnx::TypeProto_Tensor &tt = in.type().tensor_type();
  bool mismatch = tt.elem_type() != init.data_type();
  std::string declared = elemTypeName(tt.elem_type());
  if (tt.has_shape()) {
    llvm::SmallVector<std::string> parts;
    mismatch |= tt.shape().dim_size() != init.dims_size();
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto &dim = tt.shape().dim(i);
      if (dim.has_dim_value()) {
        parts.push_back(std::to_string(dim.dim_value()));
        if (i < init.dims_size() && dim.dim_value() != init.dims(i))
          mismatch = true;
      } else {
        parts.push_back(dim.has_dim_param() ? dim.dim_param() : "?");
      }
    }
    declared += " [" + llvm::join(parts, ", ") + "]";
  }
  if (!mismatch)
    return "";
  llvm::SmallVector<int64_t> dims(init.dims().begin(), init.dims().end());
  return "graph input '" + in.name() + "' is declared as " + declared +
         ", but the initializer of that name is " +
         elemTypeName(init.data_type()) + " " + dimsString(dims) +
         "; a graph input that is also an initializer must have its type and "
         "shape (file corrupt, or edited by hand?)";
}

} // namespace

std::string
megagraph::onnx_import::checkModelStructure(const onnx::ModelProto &model) {
  if (!model.has_ir_version() || model.ir_version() <= 0)
    return "the model states no IR version (ir_version is " +
           (model.has_ir_version() ? std::to_string(model.ir_version())
                                   : std::string("missing")) +
           "); an ONNX file records the IR version it follows (file corrupt, "
           "or written by hand? onnx.helper.make_model sets it)";
  const onnx::GraphProto &graph = model.graph();

  llvm::StringMap<const onnx::TensorProto *> initializers;
  for (const onnx::TensorProto &init : graph.initializer())
    if (!initializers.try_emplace(init.name(), &init).second)
      return "initializer '" + init.name() +
             "' is given twice; each tensor name has one value";

  // What wrote each tensor so far, for the single-writer rule.
  llvm::StringMap<std::string> writer;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (!writer.try_emplace(in.name(), "graph input").second)
      return "graph input '" + in.name() +
             "' is listed twice; each graph input is named once";
    auto it = initializers.find(in.name());
    if (it != initializers.end()) {
      std::string problem = checkInputMatchesInitializer(in, *it->second);
      if (!problem.empty())
        return problem;
    }
  }
  for (const onnx::TensorProto &init : graph.initializer())
    writer.try_emplace(init.name(), "initializer");
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output()) {
      if (out.empty())
        continue;
      auto [it, isNew] = writer.try_emplace(out, nodeWhere(node));
      if (isNew)
        continue;
      std::string first = it->second;
      if (first == nodeWhere(node))
        return "tensor '" + out + "' is written twice by " + nodeWhere(node) +
               "; in ONNX each tensor has exactly one writer";
      if (!StringRef(first).starts_with("node "))
        return "tensor '" + out + "' is " + withArticle(first) +
               " and is written again by " + nodeWhere(node) +
               "; in ONNX each tensor has exactly one writer";
      return "tensor '" + out + "' is written by " + first + " and again by " +
             nodeWhere(node) + "; in ONNX each tensor has exactly one writer";
    }
  return "";
}

std::string megagraph::onnx_import::checkNodeSchema(const onnx::NodeProto &node,
                                                    int64_t opset) {
  std::optional<OpSignature> sig = signatureOf(node.op_type(), opset);
  if (!sig)
    return "";
  std::string schemaName =
      node.op_type() + "-" + std::to_string(sig->sinceVersion);

  // Attributes: known, once each, of the schema's type.
  llvm::StringSet<> seen;
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (!seen.insert(a.name()).second)
      return "attribute '" + a.name() + "' is given twice";
    auto it = sig->attributes.find(a.name());
    if (it == sig->attributes.end()) {
      // An attribute of the op in other opsets: say which.
      auto hasAttr = [&](int64_t version) {
        std::optional<OpSignature> other = signatureOf(node.op_type(), version);
        return other && other->attributes.count(a.name());
      };
      for (int64_t v = opset + 1; v <= kNewestOpset; ++v)
        if (hasAttr(v))
          return "the '" + a.name() + "' attribute of " + node.op_type() +
                 " needs opset " + std::to_string(v) + " or newer";
      for (int64_t v = opset - 1; v >= 1; --v)
        if (hasAttr(v))
          return "the '" + a.name() + "' attribute is not part of " +
                 node.op_type() + " since opset " + std::to_string(v + 1) +
                 " (schema " + schemaName + ")";
      llvm::SmallVector<StringRef> known;
      for (const auto &entry : sig->attributes)
        known.push_back(entry.first);
      return "'" + a.name() + "' is not an attribute of " + node.op_type() +
             " in opset " + std::to_string(opset) + " (schema " + schemaName +
             "; its attributes: " +
             (known.empty() ? std::string("none") : llvm::join(known, ", ")) +
             ")";
    }
    if (!a.ref_attr_name().empty())
      return "attribute '" + a.name() + "' refers to a function attribute ('" +
             a.ref_attr_name() + "'), which only a function body may do";
    AttrType expected = it->second.first;
    llvm::SmallVector<AttrType, 2> kinds = populatedKinds(a);
    if (kinds.size() > 1)
      return "attribute '" + a.name() + "' holds values of several types (" +
             typeName(kinds[0]) + " and " + typeName(kinds[1]) +
             "; file corrupt?)";
    AttrType given = a.type();
    if (given == onnx::AttributeProto::UNDEFINED && !kinds.empty())
      given = kinds.front();
    if (!kinds.empty() && kinds.front() != given)
      return "attribute '" + a.name() + "' is declared " + typeName(given) +
             " but holds " + withArticle(typeName(kinds.front())) + " value" +
             shownValue(a, kinds.front()) + " (file corrupt?)";
    if (given == onnx::AttributeProto::UNDEFINED)
      return "attribute '" + a.name() +
             "' has no type and no value (file "
             "corrupt?)";
    if (given != expected)
      return "attribute '" + a.name() + "' must be " +
             withArticle(typeName(expected)) + ", but is given as " +
             withArticle(typeName(given)) + shownValue(a, given);
  }
  for (const auto &[name, spec] : sig->attributes)
    if (spec.second && !seen.contains(name))
      return "required attribute '" + name + "' is missing";

  // Arity.
  auto range = [](int lo, int hi) {
    if (lo == hi)
      return std::to_string(lo);
    if (hi == kUnbounded)
      return "at least " + std::to_string(lo);
    return std::to_string(lo) + " to " + std::to_string(hi);
  };
  auto plural = [](int n, const char *what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  if (node.input_size() < sig->minInputs ||
      node.input_size() > sig->maxInputs) {
    std::string later;
    for (int64_t v = opset + 1; v <= kNewestOpset && later.empty(); ++v) {
      std::optional<OpSignature> other = signatureOf(node.op_type(), v);
      if (other && node.input_size() >= other->minInputs &&
          node.input_size() <= other->maxInputs)
        later = " (" + std::to_string(node.input_size()) + " need opset " +
                std::to_string(v) + " or newer)";
    }
    return "has " + plural(node.input_size(), "input") + ", but " +
           node.op_type() + " in opset " + std::to_string(opset) + " takes " +
           range(sig->minInputs, sig->maxInputs) + later;
  }
  if (node.output_size() < sig->minOutputs ||
      node.output_size() > sig->maxOutputs)
    return "has " + plural(node.output_size(), "output") + ", but " +
           node.op_type() + " in opset " + std::to_string(opset) +
           " produces " + range(sig->minOutputs, sig->maxOutputs);
  return "";
}
