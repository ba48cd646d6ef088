//===- ImportContext.cpp - State shared by the ONNX op importers *- C++ -*-===//
//
// Part of MegaGraph. Constant tensors, tensor-table access, diagnostics, and
// the TOSA builders every op handler uses. All builders produce static
// result types computed here, so handlers never rely on TOSA shape
// inference.
//
//===----------------------------------------------------------------------===//

#include "ImportContext.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <optional>

using namespace mlir;

namespace megagraph::onnx_import {

static bool hasNoElements(ArrayRef<int64_t> shape) {
  return llvm::is_contained(shape, 0);
}

//===----------------------------------------------------------------------===//
// ConstTensor
//===----------------------------------------------------------------------===//

int64_t ConstTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double ConstTensor::getDouble(int64_t i) const {
  return isFloat() ? floats[i] : static_cast<double>(ints[i]);
}

int64_t ConstTensor::getInt(int64_t i) const {
  return isFloat() ? static_cast<int64_t>(floats[i]) : ints[i];
}

ConstTensor ConstTensor::zeros(Type elementType, ArrayRef<int64_t> shape) {
  ConstTensor c;
  c.elementType = elementType;
  c.shape.assign(shape.begin(), shape.end());
  if (c.isFloat())
    c.floats.assign(c.numElements(), 0.0);
  else
    c.ints.assign(c.numElements(), 0);
  return c;
}

void ConstTensor::set(int64_t i, double value) {
  if (auto ft = dyn_cast<FloatType>(elementType)) {
    // Round to the element type so later folds see what the tensor holds.
    APFloat f(value);
    bool lost;
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    floats[i] = f.convertToDouble();
  } else if (elementType.isInteger(1)) {
    ints[i] = value != 0.0;
  } else {
    // Truncate toward zero, then wrap to the integer width.
    int64_t v = std::isfinite(value) && std::abs(value) < 9.2e18
                    ? static_cast<int64_t>(value)
                    : 0;
    unsigned width = elementType.getIntOrFloatBitWidth();
    if (width < 64)
      v = llvm::SignExtend64(static_cast<uint64_t>(v), width);
    ints[i] = v;
  }
}

DenseElementsAttr ConstTensor::toAttr() const {
  auto type = RankedTensorType::get(shape, elementType);
  if (auto ft = dyn_cast<FloatType>(elementType)) {
    SmallVector<APFloat> values;
    values.reserve(floats.size());
    for (double v : floats) {
      APFloat f(v);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(f);
    }
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  values.reserve(ints.size());
  for (int64_t v : ints)
    values.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true,
                           /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, values);
}

//===----------------------------------------------------------------------===//
// Element types and TensorProto
//===----------------------------------------------------------------------===//

Type convertElementType(MLIRContext *ctx, int32_t onnxType) {
  Builder b(ctx);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return Type();
  }
}

/// Reads little-endian raw bytes of `count` elements of type T.
template <typename T>
static std::vector<T> readRaw(StringRef raw, int64_t count) {
  std::vector<T> out(count);
  std::memcpy(out.data(), raw.data(), count * sizeof(T));
  return out;
}

FailureOr<StringRef> ExternalData::read(const onnx::TensorProto &proto,
                                        std::string &error) {
  std::string location;
  std::optional<uint64_t> offset, length;
  std::string what = "tensor '" + proto.name() +
                     "' stores its data outside "
                     "the model file";
  for (const onnx::StringStringEntryProto &entry : proto.external_data()) {
    uint64_t n;
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      if (StringRef(entry.value()).getAsInteger(10, n)) {
        error = what + ", with a malformed " + entry.key() + " '" +
                entry.value() + "' (file corrupt?)";
        return failure();
      }
      (entry.key() == "offset" ? offset : length) = n;
    }
  }
  if (location.empty()) {
    error = what + " but names no location (file corrupt?)";
    return failure();
  }
  // The ONNX checker's rule: a location is a file inside the model's
  // directory, never an absolute path or one that climbs out of it.
  if (llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         "..")) {
    error = what + ", at '" + location +
            "', which is not a path inside the model's directory; keep the "
            "data file beside the .onnx file";
    return failure();
  }
  if (baseDir.empty()) {
    error = what + " ('" + location +
            "'), which cannot be found for a model read from standard "
            "input; pass the .onnx file's path instead";
    return failure();
  }
  SmallString<256> path(baseDir);
  llvm::sys::path::append(path, location);
  auto it = files.find(path);
  if (it == files.end()) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!file) {
      error = what + ", in '" + path.str().str() + "', which cannot be read (" +
              file.getError().message() +
              "); copy the data file beside the .onnx file, or re-export "
              "with torch.onnx.export(..., external_data=False)";
      return failure();
    }
    it = files.try_emplace(path, std::move(*file)).first;
  }
  StringRef bytes = it->second->getBuffer();
  uint64_t begin = offset.value_or(0);
  uint64_t size =
      length.value_or(begin <= bytes.size() ? bytes.size() - begin : 0);
  if (begin > bytes.size() || size > bytes.size() - begin) {
    error = what + ", at bytes " + std::to_string(begin) + ".." +
            std::to_string(begin + size) + " of '" + path.str().str() +
            "', which has only " + std::to_string(bytes.size()) +
            " (data file truncated, or from another export?)";
    return failure();
  }
  return bytes.substr(begin, size);
}

FailureOr<ConstTensor> readTensorProto(MLIRContext *ctx,
                                       const onnx::TensorProto &proto,
                                       std::string &error,
                                       ExternalData *external) {
  ConstTensor c;
  c.elementType = convertElementType(ctx, proto.data_type());
  if (!c.elementType) {
    error = "tensor '" + proto.name() + "' has unsupported element type " +
            std::to_string(proto.data_type());
    return failure();
  }
  // A tensor stores its values in exactly one place (ONNX checker rule):
  // with two, which one a reader takes is arbitrary.
  SmallVector<StringRef, 2> stores;
  auto store = [&](bool present, StringRef field) {
    if (present)
      stores.push_back(field);
  };
  store(proto.has_raw_data(), "raw_data");
  store(proto.float_data_size() > 0, "float_data");
  store(proto.int32_data_size() > 0, "int32_data");
  store(proto.string_data_size() > 0, "string_data");
  store(proto.int64_data_size() > 0, "int64_data");
  store(proto.double_data_size() > 0, "double_data");
  store(proto.uint64_data_size() > 0, "uint64_data");
  store(proto.data_location() == onnx::TensorProto::EXTERNAL, "external data");
  if (stores.size() > 1) {
    error = "tensor '" + proto.name() + "' stores its values twice, in " +
            stores[0].str() + " and in " + stores[1].str() + " (file corrupt?)";
    return failure();
  }
  StringRef raw = proto.raw_data();
  bool hasRaw = proto.has_raw_data();
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!external) {
      error = "tensor '" + proto.name() +
              "' stores its data outside the model file, which is not "
              "supported here; re-export with "
              "torch.onnx.export(..., external_data=False)";
      return failure();
    }
    FailureOr<StringRef> bytes = external->read(proto, error);
    if (failed(bytes))
      return failure();
    raw = *bytes;
    hasRaw = true;
  }
  for (int64_t d : proto.dims())
    c.shape.push_back(d);
  int64_t n = c.numElements();
  auto sizeError = [&](int64_t got) {
    error = "tensor '" + proto.name() + "' holds " + std::to_string(got) +
            " values but its shape needs " + std::to_string(n) +
            " (file truncated or corrupt?)";
    return failure();
  };
  auto fillInts = [&](auto values) -> LogicalResult {
    if (static_cast<int64_t>(values.size()) != n)
      return sizeError(values.size());
    c.ints.assign(values.begin(), values.end());
    return success();
  };
  auto fillFloats = [&](auto values) -> LogicalResult {
    if (static_cast<int64_t>(values.size()) != n)
      return sizeError(values.size());
    c.floats.assign(values.begin(), values.end());
    return success();
  };
  auto rawSize = [&](size_t elemBytes) -> LogicalResult {
    if (raw.size() != n * elemBytes)
      return sizeError(raw.size() / elemBytes);
    return success();
  };
  LogicalResult ok = success();
  switch (proto.data_type()) {
  case onnx::TensorProto::FLOAT:
    ok = hasRaw ? (failed(rawSize(4)) ? failure()
                                      : fillFloats(readRaw<float>(raw, n)))
                : fillFloats(proto.float_data());
    break;
  case onnx::TensorProto::DOUBLE:
    ok = hasRaw ? (failed(rawSize(8)) ? failure()
                                      : fillFloats(readRaw<double>(raw, n)))
                : fillFloats(proto.double_data());
    break;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: {
    std::vector<uint16_t> bits;
    if (hasRaw) {
      if (failed(rawSize(2)))
        return failure();
      bits = readRaw<uint16_t>(raw, n);
    } else {
      bits.assign(proto.int32_data().begin(), proto.int32_data().end());
    }
    if (static_cast<int64_t>(bits.size()) != n)
      return sizeError(bits.size());
    const llvm::fltSemantics &sem =
        proto.data_type() == onnx::TensorProto::FLOAT16 ? APFloat::IEEEhalf()
                                                        : APFloat::BFloat();
    for (uint16_t v : bits)
      c.floats.push_back(APFloat(sem, APInt(16, v)).convertToDouble());
    break;
  }
  case onnx::TensorProto::INT64:
    ok = hasRaw ? (failed(rawSize(8)) ? failure()
                                      : fillInts(readRaw<int64_t>(raw, n)))
                : fillInts(proto.int64_data());
    break;
  case onnx::TensorProto::INT32:
    ok = hasRaw ? (failed(rawSize(4)) ? failure()
                                      : fillInts(readRaw<int32_t>(raw, n)))
                : fillInts(proto.int32_data());
    break;
  case onnx::TensorProto::INT16:
    ok = hasRaw ? (failed(rawSize(2)) ? failure()
                                      : fillInts(readRaw<int16_t>(raw, n)))
                : fillInts(proto.int32_data());
    break;
  case onnx::TensorProto::INT8:
    ok = hasRaw ? (failed(rawSize(1)) ? failure()
                                      : fillInts(readRaw<int8_t>(raw, n)))
                : fillInts(proto.int32_data());
    break;
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    ok = hasRaw ? (failed(rawSize(1)) ? failure()
                                      : fillInts(readRaw<uint8_t>(raw, n)))
                : fillInts(proto.int32_data());
    break;
  default:
    break;
  }
  if (failed(ok)) {
    if (error.empty())
      error = "tensor '" + proto.name() + "' could not be read";
    return failure();
  }
  return c;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

Location ImportContext::loc() const {
  if (!node)
    return b.getUnknownLoc();
  std::string name = node->name().empty() ? node->op_type() : node->name();
  return NameLoc::get(b.getStringAttr(name));
}

bool ImportContext::hasInput(int i) const {
  return i < node->input_size() && !node->input(i).empty();
}

Value ImportContext::input(int i) {
  if (!hasInput(i)) {
    (void)fail("missing required input #" + llvm::Twine(i));
    return Value();
  }
  auto it = tensors.find(node->input(i));
  if (it == tensors.end()) {
    (void)fail("input '" + node->input(i) +
               "' is not produced by any earlier node, graph input or "
               "initializer (is the graph topologically sorted?)");
    return Value();
  }
  TensorInfo &info = it->second;
  if (!info.value && info.constant)
    info.value = materialize(*info.constant);
  return info.value;
}

RankedTensorType ImportContext::inputType(int i) {
  if (const ConstTensor *c = inputConst(i))
    return RankedTensorType::get(c->shape, c->elementType);
  Value v = input(i);
  return v ? llvm::cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

const ConstTensor *ImportContext::inputConst(int i) {
  if (!hasInput(i))
    return nullptr;
  auto it = tensors.find(node->input(i));
  if (it == tensors.end() || !it->second.constant)
    return nullptr;
  return &*it->second.constant;
}

FailureOr<SmallVector<int64_t>> ImportContext::inputInts(int i,
                                                         StringRef what) {
  const ConstTensor *c = inputConst(i);
  if (!c) {
    if (hasInput(i) && !tensors.count(node->input(i)))
      return failure(input(i) == Value());
    return fail("the " + what + " (input #" + llvm::Twine(i) +
                ") must be known at compile time, but it depends on "
                "runtime data; if it comes from a dynamic input dimension, "
                "pass --input-shape NAME=D0xD1x... for every graph input");
  }
  SmallVector<int64_t> out;
  for (int64_t k = 0, e = c->numElements(); k < e; ++k)
    out.push_back(c->getInt(k));
  return out;
}

void ImportContext::setOutput(int i, Value v) {
  if (i < node->output_size() && !node->output(i).empty())
    tensors[node->output(i)] = TensorInfo{v, std::nullopt};
}

void ImportContext::setOutputConst(int i, ConstTensor c) {
  if (i < node->output_size() && !node->output(i).empty())
    tensors[node->output(i)] = TensorInfo{Value(), std::move(c)};
}

Value ImportContext::materialize(const ConstTensor &c) {
  if (c.numElements() == 0)
    return emptyTensor(c.shape, c.elementType);
  DenseElementsAttr attr = c.toAttr();
  return tosa::ConstOp::create(b, loc(), attr.getType(), attr);
}

//===----------------------------------------------------------------------===//
// Attributes and diagnostics
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *ImportContext::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node->attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t ImportContext::attrInt(StringRef name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : dflt;
}

float ImportContext::attrFloat(StringRef name, float dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->f() : dflt;
}

std::string ImportContext::attrString(StringRef name, StringRef dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : dflt.str();
}

std::optional<SmallVector<int64_t>>
ImportContext::attrInts(StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

LogicalResult ImportContext::fail(const llvm::Twine &message) {
  std::string name = node ? node->name() : "";
  std::string op = node ? node->op_type() : "";
  emitError(loc()) << "node '" << name << "' (" << op << ", opset " << opset
                   << "): " << message;
  return failure();
}

FailureOr<int64_t> ImportContext::normAxis(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return fail("axis " + llvm::Twine(axis) + " is out of range for rank " +
                llvm::Twine(rank));
  return a;
}

//===----------------------------------------------------------------------===//
// TOSA builders
//===----------------------------------------------------------------------===//

Value ImportContext::splat(Type elem, double value, ArrayRef<int64_t> shape) {
  if (llvm::is_contained(shape, 0))
    return emptyTensor(shape, elem);
  ConstTensor one = ConstTensor::zeros(elem, {});
  one.set(0, value);
  auto type = tensorType(shape, elem);
  auto attr =
      DenseElementsAttr::get(type, one.toAttr().getSplatValue<Attribute>());
  return tosa::ConstOp::create(b, loc(), type, attr);
}

Value ImportContext::emptyTensor(ArrayRef<int64_t> shape, Type elem) {
  return tensor::EmptyOp::create(b, loc(), shape, elem);
}

Value ImportContext::reshape(Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  if (hasNoElements(shape) || hasNoElements(shapeOf(v)))
    return emptyTensor(shape, elemOf(v));
  ImplicitLocOpBuilder ib(loc(), b);
  Value shapeValue = tosa::getTosaConstShape(ib, shape);
  return tosa::ReshapeOp::create(b, loc(), tensorType(shape, elemOf(v)), v,
                                 shapeValue);
}

Value ImportContext::transpose(Value v, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return v;
  SmallVector<int64_t> shape;
  SmallVector<int32_t> perms;
  for (int64_t p : perm) {
    shape.push_back(shapeOf(v)[p]);
    perms.push_back(static_cast<int32_t>(p));
  }
  if (hasNoElements(shape))
    return emptyTensor(shape, elemOf(v));
  return tosa::TransposeOp::create(b, loc(), tensorType(shape, elemOf(v)), v,
                                   b.getDenseI32ArrayAttr(perms));
}

Value ImportContext::cast(Value v, Type elem) {
  if (elemOf(v) == elem)
    return v;
  if (hasNoElements(shapeOf(v)))
    return emptyTensor(shapeOf(v), elem);
  Type from = elemOf(v);
  if (isa<FloatType>(from) && isa<IntegerType>(elem) && !elem.isInteger(1)) {
    // ONNX (like C and numpy) truncates toward zero; tosa.cast rounds to
    // nearest. trunc(x) = x < 0 ? ceil(x) : floor(x).
    Location l = loc();
    Type type = v.getType();
    Value zero = splat(from, 0.0, SmallVector<int64_t>(shapeOf(v).size(), 1));
    Value neg = tosa::GreaterOp::create(
        b, l, tensorType(shapeOf(v), b.getI1Type()), zero, v);
    v = tosa::SelectOp::create(b, l, type, neg,
                               tosa::CeilOp::create(b, l, type, v),
                               tosa::FloorOp::create(b, l, type, v));
  }
  return tosa::CastOp::create(b, loc(), tensorType(shapeOf(v), elem), v);
}

Value ImportContext::expandRank(Value v, int64_t rank) {
  ArrayRef<int64_t> shape = shapeOf(v);
  if (static_cast<int64_t>(shape.size()) >= rank)
    return v;
  SmallVector<int64_t> newShape(rank - shape.size(), 1);
  newShape.append(shape.begin(), shape.end());
  return reshape(v, newShape);
}

FailureOr<SmallVector<int64_t>>
ImportContext::broadcastShape(ArrayRef<int64_t> a, ArrayRef<int64_t> c) {
  size_t rank = std::max(a.size(), c.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t dc = i < rank - c.size() ? 1 : c[i - (rank - c.size())];
    if (da != dc && da != 1 && dc != 1) {
      (void)fail("shapes do not broadcast: dimension " + llvm::Twine(i) +
                 " is " + llvm::Twine(da) + " vs " + llvm::Twine(dc));
      return failure();
    }
    out[i] = da == 1 ? dc : da;
  }
  return out;
}

FailureOr<Value> ImportContext::binary(StringRef kind, Value a, Value c) {
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShape(shapeOf(a), shapeOf(c));
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  a = expandRank(a, rank);
  c = expandRank(c, rank);
  Type elem = elemOf(a);
  if (elemOf(c) != elem)
    return fail("operand element types differ");
  Location l = loc();
  RankedTensorType type = tensorType(*shape, elem);
  RankedTensorType boolType = tensorType(*shape, b.getI1Type());
  if (hasNoElements(*shape)) {
    bool isBool = kind == "equal" || kind.starts_with("greater") ||
                  kind.starts_with("less");
    return emptyTensor(*shape, isBool ? b.getI1Type() : elem);
  }
  if (kind == "add")
    return Value(tosa::AddOp::create(b, l, type, a, c));
  if (kind == "sub")
    return Value(tosa::SubOp::create(b, l, type, a, c));
  if (kind == "mul") {
    Value shift = splat(b.getI8Type(), 0, {1});
    return Value(tosa::MulOp::create(b, l, type, a, c, shift));
  }
  if (kind == "div") {
    if (isa<FloatType>(elem)) {
      Value rec =
          tosa::ReciprocalOp::create(b, l, tensorType(shapeOf(c), elem), c);
      Value shift = splat(b.getI8Type(), 0, {1});
      return Value(tosa::MulOp::create(b, l, type, a, rec, shift));
    }
    if (elem.getIntOrFloatBitWidth() < 32) {
      // Narrow integers divide in i32 (exact); i32 and i64 natively.
      Type i32 = b.getI32Type();
      Value q = tosa::IntDivOp::create(b, l, tensorType(*shape, i32),
                                       cast(a, i32), cast(c, i32));
      return cast(q, elem);
    }
    return Value(tosa::IntDivOp::create(b, l, type, a, c));
  }
  if (kind == "pow")
    return Value(tosa::PowOp::create(b, l, type, a, c));
  if (kind == "max")
    return Value(tosa::MaximumOp::create(b, l, type, a, c));
  if (kind == "min")
    return Value(tosa::MinimumOp::create(b, l, type, a, c));
  if (kind == "equal")
    return Value(tosa::EqualOp::create(b, l, boolType, a, c));
  if (kind == "greater")
    return Value(tosa::GreaterOp::create(b, l, boolType, a, c));
  if (kind == "greater_equal")
    return Value(tosa::GreaterEqualOp::create(b, l, boolType, a, c));
  if (kind == "less")
    return Value(tosa::GreaterOp::create(b, l, boolType, c, a));
  if (kind == "less_equal")
    return Value(tosa::GreaterEqualOp::create(b, l, boolType, c, a));
  if (kind == "and")
    return Value(tosa::LogicalAndOp::create(b, l, type, a, c));
  if (kind == "or")
    return Value(tosa::LogicalOrOp::create(b, l, type, a, c));
  if (kind == "xor")
    return Value(tosa::LogicalXorOp::create(b, l, type, a, c));
  return fail("internal error: unknown binary kind " + kind);
}

Value ImportContext::unary(StringRef kind, Value v) {
  Location l = loc();
  Type type = v.getType();
  Type elem = elemOf(v);
  if (hasNoElements(shapeOf(v)))
    return v;
  if (kind == "exp")
    return tosa::ExpOp::create(b, l, type, v);
  if (kind == "log")
    return tosa::LogOp::create(b, l, type, v);
  if (kind == "erf")
    return tosa::ErfOp::create(b, l, type, v);
  if (kind == "tanh")
    return tosa::TanhOp::create(b, l, type, v);
  if (kind == "sigmoid")
    return tosa::SigmoidOp::create(b, l, type, v);
  if (kind == "reciprocal")
    return tosa::ReciprocalOp::create(b, l, type, v);
  if (kind == "rsqrt")
    return tosa::RsqrtOp::create(b, l, type, v);
  if (kind == "abs")
    return tosa::AbsOp::create(b, l, type, v);
  if (kind == "floor")
    return tosa::FloorOp::create(b, l, type, v);
  if (kind == "ceil")
    return tosa::CeilOp::create(b, l, type, v);
  if (kind == "not")
    return tosa::LogicalNotOp::create(b, l, type, v);
  if (kind == "sin")
    return tosa::SinOp::create(b, l, type, v);
  if (kind == "cos")
    return tosa::CosOp::create(b, l, type, v);
  if (kind == "neg") {
    Value zp = splat(elem, 0, {1});
    return tosa::NegateOp::create(b, l, type, v, zp, zp);
  }
  if (kind == "sqrt") {
    Value half = splat(elem, 0.5, SmallVector<int64_t>(shapeOf(v).size(), 1));
    return tosa::PowOp::create(b, l, type, v, half);
  }
  if (kind == "relu") {
    Attribute lo, hi;
    if (auto ft = dyn_cast<FloatType>(elem)) {
      lo = b.getFloatAttr(ft, 0.0);
      hi = b.getFloatAttr(
          ft, APFloat::getInf(ft.getFloatSemantics()).convertToDouble());
    } else {
      lo = b.getIntegerAttr(elem, 0);
      hi = b.getIntegerAttr(
          elem, APInt::getSignedMaxValue(elem.getIntOrFloatBitWidth()));
    }
    return tosa::ClampOp::create(b, l, type, v, llvm::cast<TypedAttr>(lo),
                                 llvm::cast<TypedAttr>(hi));
  }
  llvm_unreachable("unknown unary kind");
}

Value ImportContext::reduce(StringRef kind, Value v, ArrayRef<int64_t> axes,
                            bool keepDims) {
  Location l = loc();
  Type elem = elemOf(v);
  SmallVector<int64_t> shape(shapeOf(v));
  int64_t count = 1;
  for (int64_t axis : axes) {
    count *= shape[axis];
    shape[axis] = 1;
  }
  SmallVector<int64_t> outShape;
  for (auto [i, d] : llvm::enumerate(shape))
    if (keepDims || !llvm::is_contained(axes, static_cast<int64_t>(i)))
      outShape.push_back(d);
  if (hasNoElements(outShape))
    return emptyTensor(outShape, elem);
  if (hasNoElements(shapeOf(v))) {
    // Reducing an empty set: the identity of the reduction (numpy/ONNX).
    double identity = 0.0;
    if (kind == "prod")
      identity = 1.0;
    else if (kind == "mean")
      identity = std::nan("");
    else if (kind == "max" || kind == "min") {
      bool isMax = kind == "max";
      if (auto ft = dyn_cast<FloatType>(elem))
        identity = isMax ? -INFINITY : INFINITY;
      else if (elem.isInteger(1))
        identity = isMax ? 0.0 : 1.0;
      else {
        unsigned w = elem.getIntOrFloatBitWidth();
        identity = static_cast<double>(
            isMax ? APInt::getSignedMinValue(w).getSExtValue()
                  : APInt::getSignedMaxValue(w).getSExtValue());
      }
    }
    return splat(elem, identity, outShape);
  }
  shape.assign(shapeOf(v).begin(), shapeOf(v).end());
  for (int64_t axis : axes) {
    shape[axis] = 1;
    RankedTensorType type = tensorType(shape, elem);
    IntegerAttr ax = b.getI32IntegerAttr(axis);
    if (kind == "sum" || kind == "mean")
      v = tosa::ReduceSumOp::create(b, l, type, v, ax);
    else if (kind == "max")
      v = tosa::ReduceMaxOp::create(b, l, type, v, ax);
    else if (kind == "min")
      v = tosa::ReduceMinOp::create(b, l, type, v, ax);
    else if (kind == "prod")
      v = tosa::ReduceProductOp::create(b, l, type, v, ax);
  }
  if (kind == "mean" && count != 1) {
    // Floats multiply by 1/n; integers divide (truncating, like numpy's
    // mean cast back to the integer type).
    SmallVector<int64_t> ones(shape.size(), 1);
    bool isFloat = isa<FloatType>(elem);
    Value n = splat(elem, isFloat ? 1.0 / count : double(count), ones);
    v = *binary(isFloat ? "mul" : "div", v, n);
  }
  return reshape(v, outShape);
}

Value ImportContext::broadcastTo(Value v, ArrayRef<int64_t> shape) {
  v = expandRank(v, shape.size());
  SmallVector<int64_t> multiples;
  bool needed = false;
  for (auto [d, t] : llvm::zip(shapeOf(v), shape)) {
    multiples.push_back(d == t ? 1 : t);
    needed |= d != t;
  }
  if (!needed)
    return v;
  if (hasNoElements(shape))
    return emptyTensor(shape, elemOf(v));
  ImplicitLocOpBuilder ib(loc(), b);
  Value m = tosa::getTosaConstShape(ib, multiples);
  return tosa::TileOp::create(b, loc(), tensorType(shape, elemOf(v)), v, m);
}

FailureOr<Value> ImportContext::matmul(Value a, Value c) {
  Type elem = elemOf(a);
  SmallVector<int64_t> sa(shapeOf(a)), sc(shapeOf(c));
  bool vecA = sa.size() == 1, vecC = sc.size() == 1;
  if (vecA)
    sa.insert(sa.begin(), 1);
  if (vecC)
    sc.push_back(1);
  if (sa.size() < 2 || sc.size() < 2)
    return fail("matmul operands must have rank >= 1");
  int64_t m = sa[sa.size() - 2], k = sa.back(), k2 = sc[sc.size() - 2],
          n = sc.back();
  if (k != k2)
    return fail("matmul contraction sizes differ: " + llvm::Twine(k) + " vs " +
                llvm::Twine(k2));
  ArrayRef<int64_t> batchA = ArrayRef<int64_t>(sa).drop_back(2),
                    batchC = ArrayRef<int64_t>(sc).drop_back(2);
  FailureOr<SmallVector<int64_t>> batch = broadcastShape(batchA, batchC);
  if (failed(batch))
    return failure();
  int64_t batchCount = 1;
  for (int64_t d : *batch)
    batchCount *= d;
  SmallVector<int64_t> outShape(*batch);
  if (!vecA)
    outShape.push_back(m);
  if (!vecC)
    outShape.push_back(n);
  if (hasNoElements(outShape))
    return emptyTensor(outShape, elem);
  if (k == 0)
    return splat(elem, 0.0, outShape);
  a = reshape(a, sa);
  c = reshape(c, sc);
  bool cShared = llvm::all_of(batchC, [](int64_t d) { return d == 1; });
  Value a3, c3;
  int64_t rows = m, groups = batchCount;
  if (cShared) {
    // Shared right operand (a weight): fold the batch into the rows.
    SmallVector<int64_t> fullA(*batch);
    fullA.append({m, k});
    a3 = reshape(broadcastTo(a, fullA), {1, batchCount * m, k});
    c3 = reshape(c, {1, k, n});
    rows = batchCount * m;
    groups = 1;
  } else {
    SmallVector<int64_t> fullA(*batch), fullC(*batch);
    fullA.append({m, k});
    fullC.append({k, n});
    a3 = reshape(broadcastTo(a, fullA), {batchCount, m, k});
    c3 = reshape(broadcastTo(c, fullC), {batchCount, k, n});
  }
  Value zp = splat(elem, 0, {1});
  Value out = tosa::MatMulOp::create(
      b, loc(), tensorType({groups, rows, n}, elem), a3, c3, zp, zp);
  return reshape(out, outShape);
}

Value ImportContext::slice(Value v, ArrayRef<int64_t> start,
                           ArrayRef<int64_t> size) {
  if (ArrayRef<int64_t>(size) == shapeOf(v))
    return v;
  if (hasNoElements(size))
    return emptyTensor(size, elemOf(v));
  ImplicitLocOpBuilder ib(loc(), b);
  Value s0 = tosa::getTosaConstShape(ib, start);
  Value s1 = tosa::getTosaConstShape(ib, size);
  return tosa::SliceOp::create(b, loc(), tensorType(size, elemOf(v)), v, s0,
                               s1);
}

Value ImportContext::concat(ValueRange vs, int64_t axis) {
  SmallVector<int64_t> shape(shapeOf(vs.front()));
  shape[axis] = 0;
  for (Value v : vs)
    shape[axis] += shapeOf(v)[axis];
  if (hasNoElements(shape))
    return emptyTensor(shape, elemOf(vs.front()));
  // Pieces without elements contribute nothing.
  SmallVector<Value> parts;
  for (Value v : vs)
    if (!hasNoElements(shapeOf(v)))
      parts.push_back(v);
  if (parts.size() == 1)
    return parts.front();
  return tosa::ConcatOp::create(b, loc(), tensorType(shape, elemOf(vs.front())),
                                parts, b.getI32IntegerAttr(axis));
}

Value ImportContext::reverse(Value v, int64_t axis) {
  if (shapeOf(v)[axis] <= 1 || hasNoElements(shapeOf(v)))
    return v;
  return tosa::ReverseOp::create(b, loc(), v.getType(), v,
                                 b.getI32IntegerAttr(axis));
}

Value ImportContext::gather(Value v, int64_t axis, Value indices) {
  ArrayRef<int64_t> shape = shapeOf(v);
  ArrayRef<int64_t> idxShape = shapeOf(indices);
  int64_t rank = shape.size(), idxRank = idxShape.size();
  SmallVector<int64_t> outShape(shape.take_front(axis));
  outShape.append(idxShape.begin(), idxShape.end());
  outShape.append(shape.begin() + axis + 1, shape.end());
  if (hasNoElements(outShape))
    return emptyTensor(outShape, elemOf(v));
  // Move the gathered axis first, flatten the rest into channels,
  // tosa.gather, and move the leading dims back.
  SmallVector<int64_t> perm = {axis};
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  Value moved = transpose(v, perm);
  int64_t k = shape[axis], channels = 1, count = 1;
  for (int64_t d : shapeOf(moved).drop_front())
    channels *= d;
  for (int64_t d : idxShape)
    count *= d;
  Value values = reshape(moved, {1, k, channels});
  Value idx = reshape(cast(indices, b.getI32Type()), {1, count});
  Value gathered = tosa::GatherOp::create(
      b, loc(), tensorType({1, count, channels}, elemOf(v)), values, idx);
  // gathered = idx dims + shape[:axis] + shape[axis+1:]; bring shape[:axis]
  // to the front.
  SmallVector<int64_t> midShape(idxShape);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      midShape.push_back(shape[d]);
  Value out = reshape(gathered, midShape);
  SmallVector<int64_t> back;
  for (int64_t d = 0; d < axis; ++d)
    back.push_back(idxRank + d);
  for (int64_t d = 0; d < idxRank; ++d)
    back.push_back(d);
  for (int64_t d = idxRank + axis; d < static_cast<int64_t>(midShape.size());
       ++d)
    back.push_back(d);
  return transpose(out, back);
}

Value ImportContext::gather(Value v, int64_t axis, ArrayRef<int64_t> indices) {
  ConstTensor idx = ConstTensor::zeros(b.getI32Type(),
                                       {static_cast<int64_t>(indices.size())});
  for (auto [i, j] : llvm::enumerate(indices))
    idx.set(i, static_cast<double>(j));
  return gather(v, axis, materialize(idx));
}

Value ImportContext::select(Value pred, Value onTrue, Value onFalse) {
  FailureOr<SmallVector<int64_t>> s1 =
      broadcastShape(shapeOf(onTrue), shapeOf(onFalse));
  if (failed(s1))
    return Value();
  FailureOr<SmallVector<int64_t>> shape = broadcastShape(shapeOf(pred), *s1);
  if (failed(shape))
    return Value();
  int64_t rank = shape->size();
  if (elemOf(onTrue) != elemOf(onFalse)) {
    (void)fail("the two branches have different element types");
    return Value();
  }
  if (hasNoElements(*shape))
    return emptyTensor(*shape, elemOf(onTrue));
  if (!elemOf(pred).isInteger(1))
    pred = cast(pred, b.getI1Type());
  return tosa::SelectOp::create(
      b, loc(), tensorType(*shape, elemOf(onTrue)), expandRank(pred, rank),
      expandRank(onTrue, rank), expandRank(onFalse, rank));
}

Value ImportContext::scalarLike(Value v, double value) {
  return splat(elemOf(v), value, SmallVector<int64_t>(shapeOf(v).size(), 1));
}

Value ImportContext::elementwise(
    ValueRange ins, Type resultElem,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<int64_t> shape;
  for (Value v : ins) {
    FailureOr<SmallVector<int64_t>> s = broadcastShape(shape, shapeOf(v));
    if (failed(s))
      return Value();
    shape = *s;
  }
  if (hasNoElements(shape))
    return emptyTensor(shape, resultElem);
  int64_t rank = shape.size();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  SmallVector<Value> operands;
  for (Value v : ins) {
    v = expandRank(v, rank);
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(shapeOf(v)[d] == 1 && shape[d] != 1
                          ? getAffineConstantExpr(0, ctx)
                          : getAffineDimExpr(d, ctx));
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
    operands.push_back(v);
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = tensor::EmptyOp::create(b, loc(), shape, resultElem);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc(), TypeRange{tensorType(shape, resultElem)}, operands,
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args.drop_back()));
      });
  return op.getResult(0);
}

} // namespace megagraph::onnx_import
