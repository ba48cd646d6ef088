//===- GTAttrs.cpp - gt dialect attributes ----------------------*- C++ -*-===//
//
// Part of MegaGraph. `#gt.plan` and its verifier.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace megagraph::gt;

FailureOr<SmallVector<int64_t>> megagraph::gt::parseI64List(AsmParser &parser) {
  SmallVector<int64_t> values;
  if (failed(
          parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
            return parser.parseInteger(values.emplace_back());
          })))
    return failure();
  return values;
}

void megagraph::gt::printI64List(AsmPrinter &printer,
                                 ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

#define GET_ATTRDEF_CLASSES
#include "megagraph/Dialect/GT/GTAttrDefs.cpp.inc"

void GTDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "megagraph/Dialect/GT/GTAttrDefs.cpp.inc"
      >();
}

/// A plan is a point of the grid dp x pp x cp with sane knobs; explicit stage
/// boundaries must describe exactly `pp` stages.
LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t dp, int64_t pp, int64_t cp,
                               int64_t microBatches, int64_t zero,
                               bool recompute, StringRef cpMode,
                               ArrayRef<int64_t> stages) {
  if (dp < 1 || pp < 1 || cp < 1)
    return emitError() << "dp, pp and cp must be >= 1, got dp = " << dp
                       << ", pp = " << pp << ", cp = " << cp;
  if (microBatches < 1)
    return emitError() << "micro_batches must be >= 1, got " << microBatches;
  if (zero < 0 || zero > 3)
    return emitError() << "zero must be a ZeRO stage in [0, 3], got " << zero;
  if (cpMode != "allgather" && cpMode != "ring" && cpMode != "ulysses")
    return emitError() << "cp_mode must be \"allgather\", \"ring\" or "
                          "\"ulysses\", got \""
                       << cpMode << "\"";
  if (stages.empty())
    return success();
  if (static_cast<int64_t>(stages.size()) != pp)
    return emitError() << "stages lists " << stages.size()
                       << " stage boundaries but pp = " << pp;
  if (stages.front() != 0)
    return emitError() << "the first stage must start at layer 0, got "
                       << stages.front();
  for (size_t i = 1; i < stages.size(); ++i)
    if (stages[i] <= stages[i - 1])
      return emitError() << "stage boundaries must be strictly increasing, "
                            "got "
                         << stages[i - 1] << " then " << stages[i];
  return success();
}
