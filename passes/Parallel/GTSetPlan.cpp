//===- GTSetPlan.cpp - Attach the parallel plan -----------------*- C++ -*-===//
//
// Part of MegaGraph. The plan a program is compiled for travels as the
// module's #gt.plan attribute: the parallelism passes read it and the entry
// table hands it to the runtime (mgrt_plan). This pass puts it there from
// the --plan spelling, so that a pass pipeline alone (megagraph-opt
// --pass-pipeline='builtin.module(train{plan=...})') compiles what
// megagraph-compile --plan does.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/Passes.h"

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Plan/ParallelPlan.h"

namespace megagraph {
#define GEN_PASS_DEF_GTSETPLAN
#include "megagraph/Passes/Passes.h.inc"
} // namespace megagraph

#define DEBUG_TYPE "gt-set-plan"

using namespace mlir;
using namespace megagraph;

namespace {

struct GTSetPlan : public megagraph::impl::GTSetPlanBase<GTSetPlan> {
  using GTSetPlanBase::GTSetPlanBase;

  void runOnOperation() override {
    ParallelPlan parsed;
    if (!plan.empty()) {
      llvm::Expected<ParallelPlan> p = parseParallelPlan(plan);
      if (!p) {
        getOperation().emitError(llvm::toString(p.takeError()));
        return signalPassFailure();
      }
      parsed = *p;
    }
    getOperation()->setAttr("gt.plan", toAttr(&getContext(), parsed));
  }
};

} // namespace
