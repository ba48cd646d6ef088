//===- GTOpsTest.cpp - C++ API tests of the gt dialect ----------*- C++ -*-===//
//
// Part of MegaGraph. Builds gt ops programmatically: result-type inference,
// verification, the cost interface and the plan attribute.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace megagraph;

namespace {

class GTOpsTest : public ::testing::Test {
protected:
  GTOpsTest() : builder(&ctx) {
    ctx.loadDialect<gt::GTDialect, func::FuncDialect>();
    module = ModuleOp::create(UnknownLoc::get(&ctx));
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A function whose arguments have `types`; the builder is left in its body.
  ValueRange makeFunc(ArrayRef<Type> types) {
    auto fn = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                   builder.getFunctionType(types, {}));
    Block *body = fn.addEntryBlock();
    builder.setInsertionPointToStart(body);
    auto ret = func::ReturnOp::create(builder, builder.getUnknownLoc());
    builder.setInsertionPoint(ret);
    return body->getArguments();
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }
  RankedTensorType i64(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getI64Type());
  }

  MLIRContext ctx;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(GTOpsTest, AttentionInfersResultFromQueryAndValue) {
  ValueRange args = makeFunc({f32({2, 128, 64}), f32({2, 256, 64}),
                              f32({2, 256, 32}), f32({8, 128, 256})});
  auto op = gt::AttentionOp::create(builder, builder.getUnknownLoc(), args[0],
                                    args[1], args[2], args[3], Value(), Value(),
                                    Value(),
                                    /*num_heads=*/8, FloatAttr());
  EXPECT_EQ(op.getType(), f32({2, 128, 32}));
  EXPECT_EQ(op.getHeadDim(), 8);
  EXPECT_DOUBLE_EQ(op.getScaleOrDefault(), 1.0 / std::sqrt(8.0));
  EXPECT_TRUE(succeeded(verify(op)));
}

TEST_F(GTOpsTest, AttentionRejectsHeadsNotDividingHidden) {
  ValueRange args =
      makeFunc({f32({1, 16, 30}), f32({1, 16, 30}), f32({1, 16, 30})});
  auto op = gt::AttentionOp::create(builder, builder.getUnknownLoc(), args[0],
                                    args[1], args[2], Value(), Value(), Value(),
                                    Value(),
                                    /*num_heads=*/4, FloatAttr());
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(verify(op)));
  EXPECT_NE(message.find("num_heads (4) must divide the hidden size (30)"),
            std::string::npos)
      << message;
}

TEST_F(GTOpsTest, AttentionCostCountsScoresNotStored) {
  ValueRange args =
      makeFunc({f32({1, 1024, 64}), f32({1, 1024, 64}), f32({1, 1024, 64})});
  auto op = gt::AttentionOp::create(builder, builder.getUnknownLoc(), args[0],
                                    args[1], args[2], Value(), Value(), Value(),
                                    Value(),
                                    /*num_heads=*/8, FloatAttr());
  auto cost = cast<gt::CostOpInterface>(op.getOperation());
  // 2*S*S*D for QK^T, the same for PV, 5 per score per head.
  int64_t s = 1024, d = 64, h = 8;
  EXPECT_EQ(cost.getFlops(), 4 * s * s * d + 5 * s * s * h);
  // The backward keeps q, k, v, out and one log-sum-exp per row and head,
  // far below the 8 * 1024 * 1024 * 4 bytes of scores.
  EXPECT_EQ(cost.getActivationBytes(), 4 * (s * d * 4) + s * h * 4);
  EXPECT_EQ(cost.getTransientBytes(), 64 * s * h * 4);
}

TEST_F(GTOpsTest, SpatialBiasAndEmbeddingsInferShapes) {
  ValueRange args =
      makeFunc({i64({2, 16, 16}), f32({32, 4}), i64({16, 9}), f32({100, 64}),
                f32({2, 16, 64}), i64({2, 16}), f32({8, 64})});
  Location loc = builder.getUnknownLoc();
  auto bias = gt::SpatialBiasOp::create(builder, loc, args[0], args[1]);
  EXPECT_EQ(bias.getType(), f32({2, 4, 16, 16}));
  auto emb = gt::NodeEmbeddingOp::create(builder, loc, args[2], args[3],
                                         /*sum_features=*/true);
  EXPECT_EQ(emb.getType(), f32({16, 64}));
  auto plain = gt::NodeEmbeddingOp::create(builder, loc, args[2], args[3],
                                           /*sum_features=*/false);
  EXPECT_EQ(plain.getType(), f32({16, 9, 64}));
  auto deg =
      gt::DegreeEmbeddingOp::create(builder, loc, args[4], args[5], args[6]);
  EXPECT_EQ(deg.getType(), f32({2, 16, 64}));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(GTOpsTest, LinearAndLayerNormInsideALayer) {
  ValueRange args = makeFunc({f32({4, 32}), f32({32, 8}), f32({8})});
  Location loc = builder.getUnknownLoc();
  auto layer = gt::LayerOp::create(builder, loc, TypeRange{f32({4, 8})},
                                   /*index=*/0, builder.getStringAttr("head"));
  Block *body = builder.createBlock(&layer.getBody());
  builder.setInsertionPointToStart(body);
  auto lin = gt::LinearOp::create(builder, loc, args[0], args[1], args[2]);
  EXPECT_EQ(lin.getType(), f32({4, 8}));
  auto ln = gt::LayerNormOp::create(builder, loc, lin, args[2], Value(),
                                    builder.getF32FloatAttr(1e-5f));
  gt::YieldOp::create(builder, loc, ValueRange{ln.getResult()});
  builder.setInsertionPointAfter(layer);
  EXPECT_TRUE(succeeded(verify(*module)));
  auto cost = cast<gt::CostOpInterface>(layer.getOperation());
  EXPECT_EQ(cost.getFlops(), 2 * 4 * 32 * 8 + 8 * 4 * 8);
}

TEST_F(GTOpsTest, PlanAttrVerifiesAndCountsDevices) {
  int64_t dp = 2, pp = 2, cp = 4, mb = 8, zero = 1;
  SmallVector<int64_t> stages = {0, 3};
  auto plan = gt::PlanAttr::get(&ctx, dp, pp, cp, mb, zero, true,
                                StringRef("ring"), ArrayRef<int64_t>(stages),
                                /*mop=*/1, /*gp=*/1, false, /*chunks=*/1);
  EXPECT_EQ(plan.getNumDevices(), 16);
  auto mop = gt::PlanAttr::get(&ctx, 1, 1, 1, 1, 0, false,
                               StringRef("allgather"), {}, /*mop=*/4,
                               /*gp=*/1, true, /*chunks=*/8);
  EXPECT_EQ(mop.getNumDevices(), 4);
  EXPECT_EQ(plan.getStages().size(), 2u);

  // Three stage boundaries for pp = 2 is rejected with a precise message.
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  SmallVector<int64_t> badStages = {0, 3, 5};
  int64_t one = 1;
  auto bad = gt::PlanAttr::getChecked(
      [&]() { return emitError(UnknownLoc::get(&ctx)); }, &ctx, one, pp, one,
      one, zero, false, StringRef("allgather"), ArrayRef<int64_t>(badStages),
      one, one, false, one);
  EXPECT_FALSE(bad);
  EXPECT_EQ(message, "stages lists 3 stage boundaries but pp = 2");
  auto both = gt::PlanAttr::getChecked(
      [&]() { return emitError(UnknownLoc::get(&ctx)); }, &ctx, one, one, one,
      one, 0, false, StringRef("allgather"), {}, /*mop=*/2, /*gp=*/2, false,
      one);
  EXPECT_FALSE(both);
  EXPECT_EQ(message, "mop and gp are two ways of splitting the nodes; give "
                     "one, got mop = 2, gp = 2");
}

} // namespace
