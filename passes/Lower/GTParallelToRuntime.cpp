//===- GTParallelToRuntime.cpp - Parallel loops on the thread pool -*- C++ -*-//
//
// Part of MegaGraph. The generated loops of a step (elementwise chains,
// layer-norm and softmax rows, gathers, optimizer updates) ran on one
// thread while the runtime's kernels used all of them. After
// convert-linalg-to-parallel-loops, this pass outlines each large
// outermost `scf.parallel` into a function over a range of its leading
// iterations and replaces the loop by a call of `mgrt_parallel_for`, which
// runs ranges of it on the kernels' pool (one pool: no second set of
// threads competing with the kernels' for the cores).
//
// Why results do not depend on the thread count: only the dimensions
// `scf.parallel` declares independent are split, reductions stay
// sequential loops inside one iteration, and each iteration runs the same
// instructions on whichever worker gets it.
//
// The outlined function takes (ctx, begin, end); the values its body uses
// from the parent are stored in a stack record before the call and loaded
// back in the outlined function, as their LLVM types, with
// `builtin.unrealized_conversion_cast` standing for the memref <->
// descriptor correspondence until the LLVM conversion folds the pairs.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"
#include "megagraph/Support/ModelNames.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace megagraph {
#define GEN_PASS_DEF_GTPARALLELTORUNTIME
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-parallel-to-runtime"

using namespace mlir;
using namespace megagraph;

namespace {

constexpr StringLiteral kParallelFor = MGRT_PARALLEL_FOR;

/// Leading iterations the pool splits: the fewest leading dimensions whose
/// iterations reach this many (so every thread gets several ranges).
constexpr int64_t kMinLeadingIterations = 64;

/// Work assumed for a loop whose trip count is not a constant.
constexpr int64_t kUnknownTripCount = 1 << 10;

/// The constant trip count of `[lb, ub)` by `step`, or nullopt.
std::optional<int64_t> constantTripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb),
                         u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return *u <= *l ? 0 : (*u - *l + *s - 1) / *s;
}

int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return llvm::MulOverflow(a, b, r) ? std::numeric_limits<int64_t>::max() : r;
}

/// Ops run by one execution of `block`, loops counted by their trip counts.
int64_t workOf(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    int64_t w = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      w = saturatingMul(constantTripCount(loop.getLowerBound(),
                                          loop.getUpperBound(), loop.getStep())
                            .value_or(kUnknownTripCount),
                        workOf(*loop.getBody()));
    } else if (auto par = dyn_cast<scf::ParallelOp>(op)) {
      w = workOf(*par.getBody());
      for (auto [lb, ub, step] :
           llvm::zip(par.getLowerBound(), par.getUpperBound(), par.getStep()))
        w = saturatingMul(
            w, constantTripCount(lb, ub, step).value_or(kUnknownTripCount));
    } else {
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          w = std::max(w, workOf(inner));
    }
    work = std::min(work + w, std::numeric_limits<int64_t>::max() / 2);
  }
  return work;
}

/// `ceil((ub - lb) / step)` as an index value (folded when constant).
Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
  return b.createOrFold<arith::CeilDivSIOp>(loc, span, step);
}

/// Ops that are cheaper to repeat in the outlined function than to pass:
/// no operands, no regions, no memory effects (constants, get_global).
bool isRematerializable(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         isMemoryEffectFree(def);
}

/// Whether the loop can run on the pool: no reductions, no calls (a call
/// may use the pool, communicate or keep state), and every value it needs
/// from outside has an LLVM form the record can hold.
bool canOutline(scf::ParallelOp par, const LLVMTypeConverter &converter) {
  if (par.getNumReductions() != 0)
    return false;
  WalkResult calls = par.getBody()->walk([](Operation *op) {
    return isa<CallOpInterface>(op) ? WalkResult::interrupt()
                                    : WalkResult::advance();
  });
  if (calls.wasInterrupted())
    return false;
  SetVector<Value> captures;
  getUsedValuesDefinedAbove(par.getRegion(), captures);
  for (Value v : captures) {
    Type t = v.getType();
    if (isRematerializable(v) || t.isIndex())
      continue;
    if (isa<MemRefType>(t) ? !converter.convertType(t)
                           : !LLVM::isCompatibleType(t))
      return false;
  }
  return true;
}

struct GTParallelToRuntimePass
    : megagraph::impl::GTParallelToRuntimeBase<GTParallelToRuntimePass> {
  using GTParallelToRuntimeBase::GTParallelToRuntimeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    LLVMTypeConverter converter(&getContext());
    // 1. The outermost parallel loops worth a dispatch, per function.
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](func::FuncOp fn) {
      fn.walk<WalkOrder::PreOrder>([&](scf::ParallelOp par) {
        if (isWorthIt(par) && canOutline(par, converter))
          loops.push_back(par);
        return WalkResult::skip(); // nested loops run inside one range
      });
    });
    if (loops.empty())
      return;
    // 2. Outline each and call the pool.
    SymbolTable symbols(module);
    func::FuncOp parallelFor = declareParallelFor(module, symbols);
    llvm::DenseMap<Operation *, unsigned> counters;
    for (scf::ParallelOp par : loops)
      outline(par, parallelFor, symbols, converter, counters);
  }

  /// Whether the loop's whole work reaches min-work.
  bool isWorthIt(scf::ParallelOp par) {
    int64_t work = workOf(*par.getBody());
    for (auto [lb, ub, step] :
         llvm::zip(par.getLowerBound(), par.getUpperBound(), par.getStep()))
      work = saturatingMul(
          work, constantTripCount(lb, ub, step).value_or(kUnknownTripCount));
    return work >= minWork;
  }

  /// `func.func private @mgrt_parallel_for((!llvm.ptr, index, index) -> (),
  /// !llvm.ptr, index, index)`, declared once.
  func::FuncOp declareParallelFor(ModuleOp module, SymbolTable &symbols) {
    if (auto existing = symbols.lookup<func::FuncOp>(kParallelFor))
      return existing;
    MLIRContext *ctx = module.getContext();
    OpBuilder b(ctx);
    Type ptr = LLVM::LLVMPointerType::get(ctx), index = b.getIndexType();
    auto body = b.getFunctionType({ptr, index, index}, {});
    auto decl =
        func::FuncOp::create(b, module.getLoc(), kParallelFor,
                             b.getFunctionType({body, ptr, index, index}, {}));
    decl.setPrivate();
    symbols.insert(decl, module.getBody()->begin());
    return decl;
  }

  void outline(scf::ParallelOp par, func::FuncOp parallelFor,
               SymbolTable &symbols, const LLVMTypeConverter &converter,
               llvm::DenseMap<Operation *, unsigned> &counters) {
    MLIRContext *ctx = &getContext();
    Location loc = par.getLoc();
    auto parent = par->getParentOfType<func::FuncOp>();
    const unsigned dims = par.getNumLoops();

    // The leading dimensions the pool splits: at least kMinLeadingIterations
    // iterations, the innermost only when it is the only dimension.
    unsigned lead = 1;
    int64_t leadIterations =
        constantTripCount(par.getLowerBound()[0], par.getUpperBound()[0],
                          par.getStep()[0])
            .value_or(kUnknownTripCount);
    while (lead + 1 < dims && leadIterations < kMinLeadingIterations) {
      leadIterations = saturatingMul(
          leadIterations,
          constantTripCount(par.getLowerBound()[lead],
                            par.getUpperBound()[lead], par.getStep()[lead])
              .value_or(kUnknownTripCount));
      ++lead;
    }

    // The values passed in the record; the bounds first, then the body's.
    SetVector<Value> used;
    for (unsigned d = 0; d < dims; ++d) {
      used.insert(par.getLowerBound()[d]);
      used.insert(par.getUpperBound()[d]);
      used.insert(par.getStep()[d]);
    }
    getUsedValuesDefinedAbove(par.getRegion(), used);
    SmallVector<Value> passed, cloned;
    SmallVector<Type> fields;
    for (Value v : used) {
      if (isRematerializable(v)) {
        cloned.push_back(v);
        continue;
      }
      passed.push_back(v);
      Type t = v.getType();
      fields.push_back(t.isIndex() ? IntegerType::get(ctx, 64)
                                   : converter.convertType(t));
    }
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    auto record = LLVM::LLVMStructType::getLiteral(ctx, fields);

    // The outlined function: (ctx, begin, end) over the leading iterations.
    OpBuilder b(ctx);
    b.setInsertionPoint(parent);
    Type index = b.getIndexType();
    std::string name = (parent.getSymName() + "_loop" +
                        Twine(counters[parent.getOperation()]++))
                           .str();
    auto fn = func::FuncOp::create(b, loc, name,
                                   b.getFunctionType({ptr, index, index}, {}));
    fn.setPrivate();
    symbols.insert(fn); // renames on a clash
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (Value v : cloned)
      map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    for (auto [i, v] : llvm::enumerate(passed)) {
      Value field = LLVM::GEPOp::create(
          b, loc, ptr, record, entry->getArgument(0),
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      Value loaded = LLVM::LoadOp::create(b, loc, fields[i], field);
      Type t = v.getType();
      map.map(v, t.isIndex()
                     ? arith::IndexCastOp::create(b, loc, t, loaded).getResult()
                 : t == fields[i]
                     ? loaded
                     : UnrealizedConversionCastOp::create(b, loc, t, loaded)
                           .getResult(0));
    }
    auto mapped = [&](ValueRange values) {
      return llvm::map_to_vector(values,
                                 [&](Value v) { return map.lookup(v); });
    };
    SmallVector<Value> lbs = mapped(par.getLowerBound()),
                       ubs = mapped(par.getUpperBound()),
                       steps = mapped(par.getStep());
    SmallVector<Value> trips;
    for (unsigned d = 0; d < lead; ++d)
      trips.push_back(tripCount(b, loc, lbs[d], ubs[d], steps[d]));
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto range = scf::ForOp::create(b, loc, entry->getArgument(1),
                                    entry->getArgument(2), one);
    func::ReturnOp::create(b, loc);
    b.setInsertionPointToStart(range.getBody());
    // The leading induction variables of iteration t (the last varies
    // fastest, as in the loop nest).
    SmallVector<Value> ivs(dims);
    Value rest = range.getInductionVar();
    for (int d = lead - 1; d >= 0; --d) {
      Value pos =
          d == 0 ? rest : b.createOrFold<arith::RemUIOp>(loc, rest, trips[d]);
      if (d > 0)
        rest = b.createOrFold<arith::DivUIOp>(loc, rest, trips[d]);
      ivs[d] = b.createOrFold<arith::AddIOp>(
          loc, lbs[d], b.createOrFold<arith::MulIOp>(loc, pos, steps[d]));
    }
    auto cloneBody = [&](OpBuilder &inner, ValueRange innerIvs) {
      for (unsigned d = lead; d < dims; ++d)
        ivs[d] = innerIvs[d - lead];
      for (auto [old, now] : llvm::zip(par.getInductionVars(), ivs))
        map.map(old, now);
      for (Operation &op : par.getBody()->without_terminator())
        inner.clone(op, map);
    };
    if (lead < dims) {
      scf::ParallelOp::create(
          b, loc, ArrayRef(lbs).drop_front(lead),
          ArrayRef(ubs).drop_front(lead), ArrayRef(steps).drop_front(lead),
          [&](OpBuilder &inner, Location, ValueRange innerIvs) {
            cloneBody(inner, innerIvs);
          });
    } else {
      cloneBody(b, {});
    }

    // The call: fill the record (allocated once, in the entry block), then
    // hand the leading iterations to the pool.
    Block &parentEntry = parent.getBody().front();
    b.setInsertionPointToStart(&parentEntry);
    Value count =
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1)).getResult();
    Value slot = LLVM::AllocaOp::create(b, loc, ptr, record, count);
    b.setInsertionPoint(par);
    for (auto [i, v] : llvm::enumerate(passed)) {
      Value value = v;
      if (v.getType().isIndex())
        value = arith::IndexCastOp::create(b, loc, fields[i], v);
      else if (v.getType() != fields[i])
        value = UnrealizedConversionCastOp::create(b, loc, fields[i], v)
                    .getResult(0);
      Value field = LLVM::GEPOp::create(
          b, loc, ptr, record, slot,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      LLVM::StoreOp::create(b, loc, value, field);
    }
    Value n = arith::ConstantIndexOp::create(b, loc, 1);
    for (unsigned d = 0; d < lead; ++d)
      n = b.createOrFold<arith::MulIOp>(
          loc, n,
          tripCount(b, loc, par.getLowerBound()[d], par.getUpperBound()[d],
                    par.getStep()[d]));
    // Each range at least min-work: ranges smaller than that cost more to
    // hand out than they save.
    int64_t perIteration = workOf(*par.getBody());
    for (unsigned d = lead; d < dims; ++d)
      perIteration =
          saturatingMul(perIteration, constantTripCount(par.getLowerBound()[d],
                                                        par.getUpperBound()[d],
                                                        par.getStep()[d])
                                          .value_or(kUnknownTripCount));
    Value grain = arith::ConstantIndexOp::create(
        b, loc,
        std::max<int64_t>(1, minWork / std::max<int64_t>(1, perIteration)));
    Value body = func::ConstantOp::create(b, loc, fn.getFunctionType(),
                                          SymbolRefAttr::get(fn));
    func::CallOp::create(b, loc, parallelFor, ValueRange{body, slot, n, grain});
    par.erase();
    ++numOutlined;
  }
};

} // namespace
