//===- GradientCoverageTest.cpp - Every importable op has a rule -*- C++
//-*-===//
//
// Part of MegaGraph. gt-autodiff differentiates whatever the ONNX importer
// and gt-raise produce, so every op they can create must implement
// GradientOpInterface (a rule, or an explicit "no gradient flows" model for
// boolean, integer and piecewise-constant ops), or be named below with the
// reason it never reaches the reverse sweep. The ops are found by scanning
// the importer's and gt-raise's sources for `<dialect>::<Name>Op::create`
// and `<dialect>::<Name>Op>` (template arguments), and matched to the
// registered ops by name, so a new op in the importer without a rule fails
// this test.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTGradients.h"
#include "megagraph/Dialect/GT/GTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace mlir;
using namespace megagraph;

namespace {

/// Ops the importer or gt-raise create that need no rule, and why.
const std::map<std::string, std::string> kNoRuleNeeded = {
    {"linalg.yield", "terminator of linalg.generic bodies"},
    {"linalg.index", "only inside linalg.generic bodies"},
    {"ml_program.global_load", "the parameters: where gradients end"},
    {"ml_program.global_load_const", "constants: no operands"},
    {"ml_program.global", "a module-level symbol, not in @main's body"},
    {"gt.layer", "structural; gt-outline-layers runs after gt-autodiff"},
    {"gt.yield", "terminator of gt.layer"},
};

/// Dialects whose ops the importer only creates inside linalg.generic
/// bodies (scalar arithmetic), never at the top level of @main.
const llvm::StringSet<> kBodyOnlyDialects = {"arith", "math"};

/// Lower-case `name` without underscores: `ReduceMax`, `reduce_max` and
/// `argmax`/`ArgMax` compare equal.
std::string normalized(StringRef name) {
  std::string out;
  for (char c : name)
    if (c != '_')
      out.push_back(llvm::toLower(c));
  return out;
}

/// `dialect.op` names of the ops the sources under `dirs` create.
std::set<std::pair<std::string, std::string>>
createdOps(ArrayRef<std::string> dirs) {
  std::set<std::pair<std::string, std::string>> ops;
  llvm::Regex pattern("(tosa|linalg|tensor|gt|ml_program|arith|math)::([A-Z]"
                      "[A-Za-z0-9]*)Op(::create|>| *,)");
  for (const std::string &dir : dirs) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec)) {
      StringRef path = it->path();
      if (!path.ends_with(".cpp") && !path.ends_with(".h"))
        continue;
      auto buffer = llvm::MemoryBuffer::getFile(path);
      EXPECT_TRUE(static_cast<bool>(buffer)) << "cannot read " << path.str();
      if (!buffer)
        continue;
      StringRef text = (*buffer)->getBuffer();
      SmallVector<StringRef> m;
      while (pattern.match(text, &m)) {
        ops.insert({m[1].str(), m[2].str()});
        text = text.drop_front(m[0].data() - text.data() + m[0].size());
      }
    }
    EXPECT_FALSE(ec) << "cannot list " << dir;
  }
  return ops;
}

class GradientCoverageTest : public ::testing::Test {
protected:
  GradientCoverageTest() {
    DialectRegistry registry;
    registry.insert<gt::GTDialect, tosa::TosaDialect, linalg::LinalgDialect,
                    tensor::TensorDialect, arith::ArithDialect,
                    ml_program::MLProgramDialect>();
    gt::registerGradientExternalModels(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  /// The registered op of `dialect` whose name normalizes like `cppName`.
  std::optional<RegisteredOperationName> lookup(StringRef dialect,
                                                StringRef cppName) {
    for (RegisteredOperationName op : ctx.getRegisteredOperations())
      if (op.getDialectNamespace() == dialect &&
          normalized(op.stripDialect()) == normalized(cppName))
        return op;
    return std::nullopt;
  }

  MLIRContext ctx;
};

TEST_F(GradientCoverageTest, EveryCreatedOpHasAGradientRule) {
  std::string root = MEGAGRAPH_SOURCE_DIR;
  auto ops = createdOps({root + "/lib/Import/Onnx", root + "/passes/Raise"});
  // The scan must see the importer: these are certainly created.
  ASSERT_GT(ops.size(), 40u);
  EXPECT_TRUE(ops.count({"tosa", "Gather"}));
  EXPECT_TRUE(ops.count({"linalg", "Softmax"}));
  for (const auto &[dialect, cppName] : ops) {
    if (kBodyOnlyDialects.contains(dialect))
      continue;
    std::optional<RegisteredOperationName> op = lookup(dialect, cppName);
    if (!op) {
      ADD_FAILURE() << dialect << "::" << cppName
                    << "Op is created but matches no registered op";
      continue;
    }
    std::string name = op->getStringRef().str();
    if (kNoRuleNeeded.count(name))
      continue;
    EXPECT_TRUE(op->hasInterface<gt::GradientOpInterface>())
        << name << " is created by the importer or gt-raise but has no "
        << "GradientOpInterface rule (add one in GTGradients.cpp, or a "
        << "NoGradient model if nothing can flow through it)";
  }
}

TEST_F(GradientCoverageTest, ListedFloatOpsHaveRules) {
  // The float-valued TOSA ops the importer might reach through future ONNX
  // ops; listed so that the coverage does not rest on the scan alone.
  for (StringRef name : {"tosa.add",        "tosa.sub",
                         "tosa.mul",        "tosa.pow",
                         "tosa.maximum",    "tosa.minimum",
                         "tosa.abs",        "tosa.exp",
                         "tosa.log",        "tosa.erf",
                         "tosa.tanh",       "tosa.sigmoid",
                         "tosa.reciprocal", "tosa.rsqrt",
                         "tosa.sin",        "tosa.cos",
                         "tosa.floor",      "tosa.ceil",
                         "tosa.negate",     "tosa.clamp",
                         "tosa.select",     "tosa.cast",
                         "tosa.reduce_sum", "tosa.reduce_max",
                         "tosa.reduce_min", "tosa.reduce_product",
                         "tosa.reshape",    "tosa.transpose",
                         "tosa.slice",      "tosa.concat",
                         "tosa.tile",       "tosa.pad",
                         "tosa.reverse",    "tosa.gather",
                         "tosa.matmul",     "linalg.softmax",
                         "linalg.generic"}) {
    std::optional<RegisteredOperationName> op =
        RegisteredOperationName::lookup(name, &ctx);
    ASSERT_TRUE(op.has_value()) << name.str();
    EXPECT_TRUE(op->hasInterface<gt::GradientOpInterface>()) << name.str();
  }
}

} // namespace
