//===- GTSparseAdjacency.cpp - Kipf's adj_norm as an edge list -*- C++ -*-===//
//
// Part of MegaGraph. Kipf & Welling's GCN takes the normalized adjacency
// D^-1/2 (A + I) D^-1/2 as a dense [N, N] input and multiplies it with the
// transformed features, O(N^2) memory and work per product. Given the data
// set's edge count, this pass replaces the input by the edge list and each
// product by the sum over the edges, built the way gt-raise raises PyG's
// GCNConv (self loops appended, degrees counted at run time, one gt.spmm
// over the CSR of the targets), so the backward and the node-splitting
// plans treat it as they treat GCNConv.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Passes/Passes.h"

#include "megagraph/Dialect/GT/GTOps.h"
#include "megagraph/Support/ModelNames.h"
#include "megagraph/Support/TosaBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"

namespace megagraph {
#define GEN_PASS_DEF_GTSPARSEADJACENCY
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-sparse-adjacency"

using namespace mlir;
using namespace megagraph;

namespace {

/// The argument of `f` whose gt.name has `role`, or null.
BlockArgument argumentWithRole(func::FuncOp f, mgrt_tensor_role role) {
  for (BlockArgument arg : f.getArguments()) {
    auto name =
        f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), gt::kTensorNameAttr);
    if (name &&
        mgrt_role_of_name(name.getValue().str().c_str(), nullptr) == role)
      return arg;
  }
  return {};
}

/// True if `t` is f32 [N, N] or [1, N, N].
bool isSquareF32(Type type, int64_t n) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.getElementType().isF32() || !t.hasStaticShape())
    return false;
  ArrayRef<int64_t> s = t.getShape();
  return s == ArrayRef<int64_t>{n, n} || s == ArrayRef<int64_t>{1, n, n};
}

/// The products `adj @ H` that read `adj`: every use must reach, through
/// reshapes to [N, N] or [1, N, N], the left operand of a tosa.matmul with
/// a [1, N, F] f32 right operand. The reshapes on the way go to `reshapes`,
/// each after the one it reads. Otherwise returns the first other user in
/// `other`.
SmallVector<tosa::MatMulOp> findProducts(Value adj, int64_t n,
                                         SmallVector<Operation *> &reshapes,
                                         Operation *&other) {
  SmallVector<tosa::MatMulOp> products;
  SmallVector<Value> work = {adj};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto r = dyn_cast<tosa::ReshapeOp>(user);
          r && isSquareF32(r.getType(), n)) {
        reshapes.push_back(r);
        work.push_back(r.getResult());
        continue;
      }
      auto m = dyn_cast<tosa::MatMulOp>(user);
      auto rhs = m ? dyn_cast<RankedTensorType>(m.getB().getType())
                   : RankedTensorType();
      if (m && use.getOperandNumber() == 0 && rhs && rhs.hasStaticShape() &&
          rhs.getRank() == 3 && rhs.getDimSize(0) == 1 &&
          rhs.getDimSize(1) == n && rhs.getElementType().isF32()) {
        products.push_back(m);
        continue;
      }
      other = user;
      return {};
    }
  }
  return products;
}

/// D^-1/2 (A + I) D^-1/2 as gt.spmm's operands: the CSR row pointer of the
/// targets and, per CSR entry, its source and its weight.
struct SparseAdjacency {
  Value rowPtr, colIdx, values;
};

/// The sparse form of D^-1/2 (A + I) D^-1/2 over `edgeIndex` [2, E] for
/// `n` nodes: self loops appended to the list, the CSR of the targets, and
/// in CSR order each entry's source and weight rsqrt(d_src) rsqrt(d_dst).
///
/// Row i aggregates the edges into i (row 1 of edge_index is the target;
/// PyG's GCNConv), d_i = 1 + the in-degree of i. The driver's dense
/// adj_norm (normalizedAdjacency, runtime/driver/Topology.cpp) sets
/// a_ij = a_ji = 1 for every edge and a_ii = 1, so it symmetrizes the
/// pattern and collapses duplicate edges and self loops; the two agree for
/// the lists the driver binds (both directions of every undirected edge,
/// no self loops or duplicates).
SparseAdjacency buildSparseAdjacency(OpBuilder &builder, Location loc,
                                     Value edgeIndex, int64_t n) {
  TosaBuilder b(builder, loc);
  const int64_t e = b.shape(edgeIndex)[1], m = e + n;
  Type i64 = builder.getI64Type(), i32 = builder.getI32Type(),
       f32 = builder.getF32Type();
  auto row = [&](int64_t r) {
    Value s =
        tosa::SliceOp::create(builder, loc, b.type({1, e}, i64), edgeIndex,
                              b.constShape({r, 0}), b.constShape({1, e}));
    return b.reshape(s, {e});
  };
  // 1. The self loops (the + I) after the edges.
  SmallVector<int64_t> ids(n);
  for (int64_t i = 0; i < n; ++i)
    ids[i] = i;
  auto idsType = b.type({n}, i64);
  Value loops = tosa::ConstOp::create(
      builder, loc, idsType,
      DenseElementsAttr::get(idsType, ArrayRef<int64_t>(ids)));
  auto withLoops = [&](Value v) {
    return tosa::ConcatOp::create(builder, loc, b.type({m}, i64),
                                  ValueRange{v, loops}, 0)
        .getResult();
  };
  Value src = withLoops(row(0)), dst = withLoops(row(1));
  // 2. The CSR of the targets; its row lengths are the degrees (an SpMM of
  //    ones, as gt-raise gives PyG's scatter_add of ones).
  auto csr = gt::CsrTransposeOp::create(builder, loc, dst, Value(),
                                        builder.getI64IntegerAttr(n));
  auto ones = [&](ArrayRef<int64_t> s) {
    auto t = b.type(s, f32);
    return tosa::ConstOp::create(
        builder, loc, t,
        DenseElementsAttr::get(t, builder.getFloatAttr(f32, 1.0)));
  };
  Value deg =
      gt::SpmmOp::create(builder, loc, b.type({n, 1}, f32), csr.getRowPtrT(),
                         csr.getColIdxT(), ones({m}), ones({m, 1}));
  Value dinv = b.rsqrt(deg);
  // 3. Sources and targets in CSR order, and the weights.
  Value perm = b.reshape(
      tosa::CastOp::create(builder, loc, b.type({m}, i32), csr.getPerm()),
      {1, m});
  auto permuted = [&](Value v) {
    Value v32 = tosa::CastOp::create(builder, loc, b.type({1, m, 1}, i32),
                                     b.reshape(v, {1, m, 1}));
    Value g =
        tosa::GatherOp::create(builder, loc, b.type({1, m, 1}, i32), v32, perm);
    return b.reshape(g, {1, m});
  };
  Value srcCsr = permuted(src), dstCsr = permuted(dst);
  auto dinvAt = [&](Value ids) {
    Value g = tosa::GatherOp::create(builder, loc, b.type({1, m, 1}, f32),
                                     b.reshape(dinv, {1, n, 1}), ids);
    return b.reshape(g, {m});
  };
  Value values = b.mul(dinvAt(srcCsr), dinvAt(dstCsr));
  return {csr.getRowPtrT(), b.reshape(srcCsr, {m}), values};
}

struct GTSparseAdjacencyPass
    : megagraph::impl::GTSparseAdjacencyBase<GTSparseAdjacencyPass> {
  using GTSparseAdjacencyBase::GTSparseAdjacencyBase;

  /// Rewrites `f` if it has an adj_norm input; fails after an error.
  LogicalResult rewrite(func::FuncOp f) {
    // 1. The dense input, and the conditions to replace it.
    BlockArgument adj = argumentWithRole(f, MGRT_ROLE_ADJ_NORM);
    if (!adj)
      return success();
    if (BlockArgument ei = argumentWithRole(f, MGRT_ROLE_EDGE_INDEX))
      return f.emitError() << "gt-sparse-adjacency: the model already has an "
                              "edge_index input ("
                           << ei.getType() << "); edges=" << edges.getValue()
                           << " would add a second one";
    if (edges == 0)
      return f.emitError() << "gt-sparse-adjacency: edges=0: the edge_index "
                              "input needs at least one edge";
    auto t = dyn_cast<RankedTensorType>(adj.getType());
    int64_t n =
        t && t.hasStaticShape() && t.getRank() > 0 ? t.getShape().back() : -1;
    if (!isSquareF32(adj.getType(), n)) {
      f.emitWarning() << "gt-sparse-adjacency: adj_norm is " << adj.getType()
                      << ", not f32 [N, N] or [1, N, N]; it stays dense";
      return success();
    }
    Operation *other = nullptr;
    SmallVector<Operation *> reshapes;
    SmallVector<tosa::MatMulOp> products =
        findProducts(adj, n, reshapes, other);
    if (other) {
      f.emitWarning() << "gt-sparse-adjacency: adj_norm is used by '"
                      << other->getName()
                      << "', not only as the left operand of a matrix "
                         "product; it stays dense";
      return success();
    }
    // 2. edge_index in adj_norm's place, and the normalization from it.
    unsigned index = adj.getArgNumber();
    OpBuilder builder(f.getContext());
    auto eiType =
        RankedTensorType::get({2, edges.getValue()}, builder.getI64Type());
    NamedAttribute name(builder.getStringAttr(gt::kTensorNameAttr),
                        builder.getStringAttr(abi::kEdgeIndex));
    if (failed(f.insertArgument(
            index, eiType, builder.getDictionaryAttr({name}), adj.getLoc())))
      return failure();
    Value edgeIndex = f.getArgument(index);
    builder.setInsertionPointToStart(&f.front());
    SparseAdjacency a =
        buildSparseAdjacency(builder, adj.getLoc(), edgeIndex, n);
    // 3. Each product adj @ H as gt.spmm over H's rows.
    for (tosa::MatMulOp m : products) {
      builder.setInsertionPoint(m);
      TosaBuilder b(builder, m.getLoc());
      ArrayRef<int64_t> hs = b.shape(m.getB());
      Value h = b.reshape(m.getB(), {n, hs[2]});
      Value y = gt::SpmmOp::create(builder, m.getLoc(), h.getType(), a.rowPtr,
                                   a.colIdx, a.values, h);
      m.replaceAllUsesWith(b.reshape(y, {1, n, hs[2]}));
      m.erase();
      ++numProducts;
    }
    // 4. The reshapes of adj_norm are dead now (readers first), then
    //    adj_norm itself.
    for (Operation *r : llvm::reverse(reshapes))
      r->erase();
    return f.eraseArgument(adj.getArgNumber());
  }

  void runOnOperation() override {
    if (edges < 0)
      return;
    for (auto f : getOperation().getOps<func::FuncOp>())
      if (!f.isExternal() && failed(rewrite(f)))
        return signalPassFailure();
  }
};

} // namespace
