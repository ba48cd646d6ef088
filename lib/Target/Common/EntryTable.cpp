//===- EntryTable.cpp - The model's tables and main() as LLVM IR -*- C++
//-*-===//
//
// Part of MegaGraph. See megagraph/Target/Executable.h. Adds to the lowered
// module what the runtime driver reads (megagraph/ModelABI.h): the tensor
// tables with their roles, the stage entries, the plan, the table of the
// model's mutable state (where each global lives), the mgrt_model_info
// global, a `void (void **)` wrapper per entry that passes
// the descriptors to its `_mlir_ciface_` function (through the backend's
// staging call when it has one), and `main()`. So the object file is the
// whole executable but for the runtime libraries; nothing is generated as
// source or compiled at link time.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Target/Executable.h"

#include "megagraph/ModelABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <cstddef>

using namespace mlir;
using namespace megagraph;

// The LLVM struct types below lay the fields out in declaration order with
// natural alignment, as the host C compiler does for these structs.
static_assert(offsetof(mgrt_tensor_info, role) ==
                  sizeof(void *) + 2 * sizeof(int) +
                      MGRT_MAX_RANK * sizeof(int64_t),
              "mgrt_tensor_info's layout differs from the emitted table");
static_assert(offsetof(mgrt_plan, text) ==
                  5 * sizeof(int64_t) + 2 * sizeof(int32_t),
              "mgrt_plan's layout differs from the emitted table");
static_assert(offsetof(mgrt_plan, moa) == offsetof(mgrt_plan, text) +
                                              sizeof(void *) +
                                              2 * sizeof(int64_t),
              "mgrt_plan's layout differs from the emitted table");
static_assert(offsetof(mgrt_plan, cp_seq) ==
                  offsetof(mgrt_plan, moa) + 2 * sizeof(int32_t),
              "mgrt_plan's layout differs from the emitted table");
static_assert(offsetof(mgrt_model_info, state) ==
                  10 * sizeof(void *) /* int fields padded to 8 bytes */,
              "mgrt_model_info's layout differs from the emitted table");
static_assert(offsetof(mgrt_state_info, data) ==
                  sizeof(mgrt_tensor_info) + 2 * sizeof(int) + sizeof(int64_t),
              "mgrt_state_info's layout differs from the emitted table");

namespace {

/// Builds the tables at the end of one module.
class EntryTableBuilder {
public:
  EntryTableBuilder(ModuleOp module, const TargetBackend &backend)
      : module(module), backend(backend), ctx(module.getContext()), b(ctx),
        loc(module.getLoc()) {
    ptr = LLVM::LLVMPointerType::get(ctx);
    i32 = IntegerType::get(ctx, 32);
    i64 = IntegerType::get(ctx, 64);
    tensorInfo = LLVM::LLVMStructType::getLiteral(
        ctx, {ptr, i32, i32, LLVM::LLVMArrayType::get(i64, MGRT_MAX_RANK), i32,
              i32});
    entryInfo =
        LLVM::LLVMStructType::getLiteral(ctx, {ptr, i32, ptr, i32, ptr, ptr});
    plan = LLVM::LLVMStructType::getLiteral(
        ctx, {i64, i64, i64, i64, i64, i32, i32, ptr, i64, i64, i32, i32, i64});
    stateInfo =
        LLVM::LLVMStructType::getLiteral(ctx, {tensorInfo, i32, i32, i64, ptr});
    modelInfo = LLVM::LLVMStructType::getLiteral(
        ctx, {ptr, i32, ptr, i32, ptr, ptr, ptr, i32, ptr, i32, ptr});
    b.setInsertionPointToEnd(module.getBody());
  }

  LogicalResult build(const ModelSignature &sig, StringRef modelName);

private:
  /// A private constant global holding `text` and a NUL, one per text.
  LLVM::GlobalOp string(StringRef text);
  /// The global table `name` of `tensors` (mgrt_tensor_info[]).
  LLVM::GlobalOp table(StringRef name, ArrayRef<TensorSignature> tensors);
  /// The state table (mgrt_state_info[]): each global's address is that of
  /// the lowered global of its name, null when lowering dropped it.
  LLVM::GlobalOp stateTable(ArrayRef<StateSignature> state);
  /// Writes tensor `t` into the mgrt_tensor_info at `position` of `array`.
  Value tensorFields(OpBuilder &ib, Value array, const TensorSignature &t,
                     LLVM::GlobalOp name, ArrayRef<int64_t> position);
  /// The wrapper `name` of `_mlir_ciface_<symbol>`, staged when the
  /// backend stages entries.
  FailureOr<LLVM::LLVMFuncOp> wrapper(StringRef name, StringRef symbol,
                                      LLVM::GlobalOp ins, size_t numIn,
                                      LLVM::GlobalOp outs, size_t numOut);
  /// A function of the module or a new declaration of it.
  LLVM::LLVMFuncOp declare(StringRef name, Type result, ArrayRef<Type> args);
  /// A global whose initializer `body` builds, in its region.
  LLVM::GlobalOp global(StringRef name, Type type,
                        function_ref<Value(OpBuilder &)> body);
  /// The name `base` or `base<n>` that no symbol of the module has.
  std::string unique(StringRef base);

  Value constant(OpBuilder &ib, Type type, int64_t value) {
    return LLVM::ConstantOp::create(ib, loc, type,
                                    ib.getIntegerAttr(type, value));
  }
  Value address(OpBuilder &ib, Operation *symbol) {
    if (auto g = dyn_cast<LLVM::GlobalOp>(symbol))
      return LLVM::AddressOfOp::create(ib, loc, g);
    return LLVM::AddressOfOp::create(ib, loc, cast<LLVM::LLVMFuncOp>(symbol));
  }
  Value insert(OpBuilder &ib, Value aggregate, Value field,
               ArrayRef<int64_t> position) {
    return LLVM::InsertValueOp::create(ib, loc, aggregate, field, position);
  }

  ModuleOp module;
  const TargetBackend &backend;
  MLIRContext *ctx;
  OpBuilder b;
  Location loc;
  Type ptr, i32, i64;
  LLVM::LLVMStructType tensorInfo, entryInfo, plan, stateInfo, modelInfo;
  llvm::StringMap<LLVM::GlobalOp> strings;
};

std::string EntryTableBuilder::unique(StringRef base) {
  std::string name = base.str();
  for (int n = 0; module.lookupSymbol(name); ++n)
    name = (base + Twine(n)).str();
  return name;
}

LLVM::GlobalOp
EntryTableBuilder::global(StringRef name, Type type,
                          function_ref<Value(OpBuilder &)> body) {
  auto g = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                  LLVM::Linkage::Internal, unique(name),
                                  Attribute());
  OpBuilder ib(ctx);
  ib.createBlock(&g.getInitializerRegion());
  LLVM::ReturnOp::create(ib, loc, body(ib));
  return g;
}

LLVM::GlobalOp EntryTableBuilder::string(StringRef text) {
  auto [it, inserted] = strings.try_emplace(text);
  if (!inserted)
    return it->second;
  std::string value = text.str();
  value.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), value.size());
  it->second = LLVM::GlobalOp::create(
      b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
      unique("mgrt.str"), b.getStringAttr(value));
  return it->second;
}

LLVM::GlobalOp EntryTableBuilder::table(StringRef name,
                                        ArrayRef<TensorSignature> tensors) {
  SmallVector<LLVM::GlobalOp> names;
  for (const TensorSignature &t : tensors)
    names.push_back(string(t.name));
  auto type = LLVM::LLVMArrayType::get(tensorInfo, tensors.size());
  return global(name, type, [&](OpBuilder &ib) {
    Value array = LLVM::ZeroOp::create(ib, loc, type);
    for (auto [i, t] : llvm::enumerate(tensors))
      array = tensorFields(ib, array, t, names[i], {static_cast<int64_t>(i)});
    return array;
  });
}

Value EntryTableBuilder::tensorFields(OpBuilder &ib, Value array,
                                      const TensorSignature &t,
                                      LLVM::GlobalOp name,
                                      ArrayRef<int64_t> position) {
  auto at = [&](std::initializer_list<int64_t> rest) {
    SmallVector<int64_t> p(position);
    p.append(rest);
    return p;
  };
  array = insert(ib, array, address(ib, name), at({0}));
  array = insert(ib, array, constant(ib, i32, t.dtype), at({1}));
  array = insert(ib, array, constant(ib, i32, t.shape.size()), at({2}));
  for (auto [d, size] : llvm::enumerate(t.shape))
    array = insert(ib, array, constant(ib, i64, size),
                   at({3, static_cast<int64_t>(d)}));
  array = insert(ib, array, constant(ib, i32, t.role), at({4}));
  return insert(ib, array, constant(ib, i32, t.index), at({5}));
}

LLVM::GlobalOp EntryTableBuilder::stateTable(ArrayRef<StateSignature> state) {
  SmallVector<LLVM::GlobalOp> names, data;
  for (const StateSignature &s : state) {
    names.push_back(string(s.tensor.name));
    data.push_back(module.lookupSymbol<LLVM::GlobalOp>(s.tensor.name));
  }
  auto type = LLVM::LLVMArrayType::get(stateInfo, state.size());
  return global("mgrt.state", type, [&](OpBuilder &ib) {
    Value array = LLVM::ZeroOp::create(ib, loc, type);
    for (auto [i, s] : llvm::enumerate(state)) {
      int64_t k = static_cast<int64_t>(i);
      array = tensorFields(ib, array, s.tensor, names[i], {k, 0});
      array = insert(ib, array, constant(ib, i32, s.kind), {k, 1});
      array = insert(ib, array, constant(ib, i32, s.bucket), {k, 2});
      array = insert(ib, array, constant(ib, i64, s.offset), {k, 3});
      if (data[i])
        array = insert(ib, array, address(ib, data[i]), {k, 4});
    }
    return array;
  });
}

LLVM::LLVMFuncOp EntryTableBuilder::declare(StringRef name, Type result,
                                            ArrayRef<Type> args) {
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, loc, name,
                                  LLVM::LLVMFunctionType::get(result, args));
}

FailureOr<LLVM::LLVMFuncOp>
EntryTableBuilder::wrapper(StringRef name, StringRef symbol, LLVM::GlobalOp ins,
                           size_t numIn, LLVM::GlobalOp outs, size_t numOut) {
  std::string cifaceName = ("_mlir_ciface_" + symbol).str();
  auto ciface = module.lookupSymbol<LLVM::LLVMFuncOp>(cifaceName);
  size_t n = numIn + numOut;
  if (!ciface || ciface.getNumArguments() != n ||
      llvm::any_of(ciface.getArgumentTypes(), [&](Type t) { return t != ptr; }))
    return module.emitError() << "no @" << cifaceName << " taking " << n
                              << " memref descriptors to call",
           failure();
  auto voidType = LLVM::LLVMVoidType::get(ctx);
  auto entryType = LLVM::LLVMFunctionType::get(voidType, {ptr});
  StringRef stage = backend.getEntryStagingFunction();
  // `name` calls the model function with descriptors d[0 .. n-1].
  std::string directName =
      stage.empty() ? name.str() : (name + "_device").str();
  auto direct = LLVM::LLVMFuncOp::create(b, loc, unique(directName), entryType,
                                         LLVM::Linkage::Internal);
  {
    OpBuilder fb(ctx);
    Block *body = direct.addEntryBlock(fb);
    fb.setInsertionPointToStart(body);
    Value d = body->getArgument(0);
    SmallVector<Value> args;
    for (size_t i = 0; i < n; ++i) {
      Value slot =
          LLVM::GEPOp::create(fb, loc, ptr, ptr, d,
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      args.push_back(LLVM::LoadOp::create(fb, loc, ptr, slot));
    }
    LLVM::CallOp::create(fb, loc, ciface, args);
    LLVM::ReturnOp::create(fb, loc, ValueRange{});
  }
  if (stage.empty())
    return direct;
  // A staging backend: `name` runs `name_device` on device copies,
  // stage(fn, d, numIn, ins, numOut, outs).
  auto stageFn = declare(stage, voidType, {ptr, ptr, i32, ptr, i32, ptr});
  auto staged = LLVM::LLVMFuncOp::create(b, loc, unique(name), entryType,
                                         LLVM::Linkage::Internal);
  OpBuilder fb(ctx);
  Block *body = staged.addEntryBlock(fb);
  fb.setInsertionPointToStart(body);
  LLVM::CallOp::create(fb, loc, stageFn,
                       ValueRange{address(fb, direct), body->getArgument(0),
                                  constant(fb, i32, numIn), address(fb, ins),
                                  constant(fb, i32, numOut),
                                  address(fb, outs)});
  LLVM::ReturnOp::create(fb, loc, ValueRange{});
  return staged;
}

LogicalResult EntryTableBuilder::build(const ModelSignature &sig,
                                       StringRef modelName) {
  if (module.lookupSymbol("main") ||
      module.lookupSymbol(MGRT_MODEL_INFO_SYMBOL))
    return module.emitError() << "the module already defines @main or @"
                              << MGRT_MODEL_INFO_SYMBOL
                              << "; the executable's entry point needs them",
           failure();
  // 1. The model's entry and its tables.
  LLVM::GlobalOp inputs = table("mgrt.inputs", sig.inputs);
  LLVM::GlobalOp outputs = table("mgrt.outputs", sig.outputs);
  FailureOr<LLVM::LLVMFuncOp> entry =
      wrapper("mgrt.entry", MGRT_MODEL_SYMBOL, inputs, sig.inputs.size(),
              outputs, sig.outputs.size());
  if (failed(entry))
    return failure();
  // 2. The pipeline stage entries.
  struct Entry {
    LLVM::GlobalOp name, inputs, outputs;
    LLVM::LLVMFuncOp fn;
    size_t numIn, numOut;
  };
  SmallVector<Entry> entries;
  for (const EntrySignature &e : sig.entries) {
    Entry out{string(e.name),
              table("mgrt.entry_inputs", e.inputs),
              table("mgrt.entry_outputs", e.outputs),
              {},
              e.inputs.size(),
              e.outputs.size()};
    FailureOr<LLVM::LLVMFuncOp> fn = wrapper(
        "mgrt.entry", e.symbol, out.inputs, out.numIn, out.outputs, out.numOut);
    if (failed(fn))
      return failure();
    out.fn = *fn;
    entries.push_back(out);
  }
  LLVM::GlobalOp entryTable;
  if (!entries.empty()) {
    auto type = LLVM::LLVMArrayType::get(entryInfo, entries.size());
    entryTable = global("mgrt.entries", type, [&](OpBuilder &ib) {
      Value array = LLVM::ZeroOp::create(ib, loc, type);
      for (auto [i, e] : llvm::enumerate(entries)) {
        int64_t k = static_cast<int64_t>(i);
        array = insert(ib, array, address(ib, e.name), {k, 0});
        array = insert(ib, array, constant(ib, i32, e.numIn), {k, 1});
        array = insert(ib, array, address(ib, e.inputs), {k, 2});
        array = insert(ib, array, constant(ib, i32, e.numOut), {k, 3});
        array = insert(ib, array, address(ib, e.outputs), {k, 4});
        array = insert(ib, array, address(ib, e.fn), {k, 5});
      }
      return array;
    });
  }
  // 3. The plan.
  LLVM::GlobalOp planGlobal;
  if (sig.plan) {
    const ParallelPlan &p = *sig.plan;
    int64_t mode = p.cpMode == "ring"      ? MGRT_CP_RING
                   : p.cpMode == "ulysses" ? MGRT_CP_ULYSSES
                                           : MGRT_CP_ALLGATHER;
    LLVM::GlobalOp text = string(toString(p));
    planGlobal = global("mgrt.plan", plan, [&](OpBuilder &ib) {
      Value v = LLVM::ZeroOp::create(ib, loc, plan);
      int64_t fields[] = {p.dp, p.pp, p.cp, p.microBatches, p.zero};
      for (auto [i, f] : llvm::enumerate(fields))
        v = insert(ib, v, constant(ib, i64, f), {static_cast<int64_t>(i)});
      v = insert(ib, v, constant(ib, i32, p.recompute ? 1 : 0), {5});
      v = insert(ib, v, constant(ib, i32, mode), {6});
      v = insert(ib, v, address(ib, text), {7});
      v = insert(ib, v, constant(ib, i64, p.mop), {8});
      v = insert(ib, v, constant(ib, i64, p.gp), {9});
      v = insert(ib, v, constant(ib, i32, p.moa ? 1 : 0), {10});
      v = insert(ib, v, constant(ib, i32, p.chunks), {11});
      return insert(ib, v, constant(ib, i64, sig.cpSeq), {12});
    });
  }
  // 4. The mutable state.
  LLVM::GlobalOp state;
  if (!sig.state.empty())
    state = stateTable(sig.state);
  // 5. mgrt_model_info.
  LLVM::GlobalOp name = string(modelName);
  auto model = global(MGRT_MODEL_INFO_SYMBOL, modelInfo, [&](OpBuilder &ib) {
    Value v = LLVM::ZeroOp::create(ib, loc, modelInfo);
    v = insert(ib, v, address(ib, name), {0});
    v = insert(ib, v, constant(ib, i32, sig.inputs.size()), {1});
    v = insert(ib, v, address(ib, inputs), {2});
    v = insert(ib, v, constant(ib, i32, sig.outputs.size()), {3});
    v = insert(ib, v, address(ib, outputs), {4});
    v = insert(ib, v, address(ib, *entry), {5});
    if (planGlobal)
      v = insert(ib, v, address(ib, planGlobal), {6});
    if (entryTable) {
      v = insert(ib, v, constant(ib, i32, entries.size()), {7});
      v = insert(ib, v, address(ib, entryTable), {8});
    }
    if (state) {
      v = insert(ib, v, constant(ib, i32, sig.state.size()), {9});
      v = insert(ib, v, address(ib, state), {10});
    }
    return v;
  });
  // 6. main(argc, argv) runs the driver on the model.
  StringRef driver =
      needsTrainingDriver(sig) ? MGRT_TRAIN_MAIN : MGRT_INFER_MAIN;
  auto driverFn = declare(driver, i32, {i32, ptr, ptr});
  auto mainFn = LLVM::LLVMFuncOp::create(
      b, loc, "main", LLVM::LLVMFunctionType::get(i32, {i32, ptr}));
  OpBuilder fb(ctx);
  Block *body = mainFn.addEntryBlock(fb);
  fb.setInsertionPointToStart(body);
  auto rc = LLVM::CallOp::create(fb, loc, driverFn,
                                 ValueRange{body->getArgument(0),
                                            body->getArgument(1),
                                            address(fb, model)});
  LLVM::ReturnOp::create(fb, loc, rc.getResult());
  return success();
}

} // namespace

LogicalResult megagraph::addEntryTable(ModuleOp module,
                                       const ModelSignature &signature,
                                       StringRef modelName,
                                       const TargetBackend &backend) {
  return EntryTableBuilder(module, backend).build(signature, modelName);
}
