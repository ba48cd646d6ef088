//===- GTAttrs.cpp - gt dialect attributes ----------------------*- C++ -*-===//
//
// Part of MegaGraph. `#gt.plan`, the attributes passes hand each other
// (`#gt.pipeline`, `#gt.zero_shard`, `#gt.device_globals`, `#gt.cp`), their
// verifiers and the list parsers their parameters share.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/ModelABI.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace megagraph::gt;

namespace {

/// `[e, e, ...]` (possibly empty), each element read by `parseOne`.
template <typename T>
FailureOr<SmallVector<T>>
parseBracketed(AsmParser &parser, function_ref<ParseResult(T &)> parseOne) {
  SmallVector<T> values;
  if (failed(
          parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
            return parseOne(values.emplace_back());
          })))
    return failure();
  return values;
}

/// `[e, e, ...]`, each element written by `printOne`.
template <typename T>
void printBracketed(AsmPrinter &printer, ArrayRef<T> values,
                    function_ref<void(T)> printOne) {
  printer << '[';
  llvm::interleave(values, printOne, [&]() { printer << ", "; });
  printer << ']';
}

} // namespace

FailureOr<SmallVector<int64_t>> megagraph::gt::parseI64List(AsmParser &parser) {
  return parseBracketed<int64_t>(
      parser, [&](int64_t &v) { return parser.parseInteger(v); });
}

void megagraph::gt::printI64List(AsmPrinter &printer,
                                 ArrayRef<int64_t> values) {
  printBracketed<int64_t>(printer, values, [&](int64_t v) { printer << v; });
}

FailureOr<SmallVector<StringAttr>>
megagraph::gt::parseStringList(AsmParser &parser) {
  return parseBracketed<StringAttr>(parser, [&](StringAttr &v) -> ParseResult {
    std::string value;
    if (failed(parser.parseString(&value)))
      return failure();
    v = StringAttr::get(parser.getContext(), value);
    return success();
  });
}

void megagraph::gt::printStringList(AsmPrinter &printer,
                                    ArrayRef<StringAttr> values) {
  printBracketed<StringAttr>(printer, values, [&](StringAttr v) {
    printer.printString(v.getValue());
  });
}

FailureOr<SmallVector<FlatSymbolRefAttr>>
megagraph::gt::parseSymbolList(AsmParser &parser) {
  return parseBracketed<FlatSymbolRefAttr>(
      parser, [&](FlatSymbolRefAttr &v) -> ParseResult {
        StringAttr name;
        if (failed(parser.parseSymbolName(name)))
          return failure();
        v = FlatSymbolRefAttr::get(name);
        return success();
      });
}

void megagraph::gt::printSymbolList(AsmPrinter &printer,
                                    ArrayRef<FlatSymbolRefAttr> values) {
  printBracketed<FlatSymbolRefAttr>(printer, values, [&](FlatSymbolRefAttr v) {
    printer.printSymbolName(v.getValue());
  });
}

StringRef megagraph::gt::stringifyCpMode(int64_t mode) {
  switch (mode) {
  case MGRT_CP_ALLGATHER:
    return "allgather";
  case MGRT_CP_RING:
    return "ring";
  case MGRT_CP_ULYSSES:
    return "ulysses";
  default:
    return "";
  }
}

FailureOr<int64_t> megagraph::gt::parseCpMode(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (failed(parser.parseKeyword(&keyword)))
    return failure();
  for (int64_t mode : {MGRT_CP_ALLGATHER, MGRT_CP_RING, MGRT_CP_ULYSSES})
    if (keyword == stringifyCpMode(mode))
      return mode;
  return parser.emitError(loc)
         << "expected allgather, ring or ulysses, got " << keyword;
}

void megagraph::gt::printCpMode(AsmPrinter &printer, int64_t mode) {
  printer << stringifyCpMode(mode);
}

#define GET_ATTRDEF_CLASSES
#include "megagraph/Dialect/GT/GTAttrDefs.cpp.inc"

void GTDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "megagraph/Dialect/GT/GTAttrDefs.cpp.inc"
      >();
}

/// `stages` holds `pp` first units (`what`: layers of #gt.plan, units of
/// #gt.pipeline), strictly increasing from 0.
static LogicalResult
verifyStageBoundaries(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<int64_t> stages, int64_t pp, StringRef what) {
  if (static_cast<int64_t>(stages.size()) != pp)
    return emitError() << "stages lists " << stages.size()
                       << " stage boundaries but pp = " << pp;
  if (stages.front() != 0)
    return emitError() << "the first stage must start at " << what << " 0, got "
                       << stages.front();
  for (size_t i = 1; i < stages.size(); ++i)
    if (stages[i] <= stages[i - 1])
      return emitError() << "stage boundaries must be strictly increasing, "
                            "got "
                         << stages[i - 1] << " then " << stages[i];
  return success();
}

/// A plan is a point of the grid dp x pp x cp (or a mop / gp split of the
/// nodes) with sane knobs; explicit stage
/// boundaries must describe exactly `pp` stages.
LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t dp, int64_t pp, int64_t cp,
                               int64_t microBatches, int64_t zero,
                               bool recompute, StringRef cpMode,
                               ArrayRef<int64_t> stages, int64_t mop,
                               int64_t gp, bool moa, int64_t chunks) {
  if (dp < 1 || pp < 1 || cp < 1)
    return emitError() << "dp, pp and cp must be >= 1, got dp = " << dp
                       << ", pp = " << pp << ", cp = " << cp;
  if (mop < 1 || gp < 1 || chunks < 1)
    return emitError() << "mop, gp and chunks must be >= 1, got mop = " << mop
                       << ", gp = " << gp << ", chunks = " << chunks;
  if (mop > 1 && gp > 1)
    return emitError() << "mop and gp are two ways of splitting the nodes; "
                          "give one, got mop = "
                       << mop << ", gp = " << gp;
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
  return verifyStageBoundaries(emitError, stages, pp, "layer");
}

/// One entry of `stages` and of `stage_time` / `stage_memory` per stage,
/// strictly increasing from 0, one `unit_time` per unit.
LogicalResult PipelineAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t pp, int64_t microBatches,
                                   ArrayRef<int64_t> stages,
                                   ArrayRef<StringAttr> units,
                                   DenseF64ArrayAttr unitTime,
                                   DenseF64ArrayAttr stageTime,
                                   ArrayRef<int64_t> stageMemory) {
  if (pp < 1 || microBatches < 1)
    return emitError() << "pp and micro_batches must be >= 1, got pp = " << pp
                       << ", micro_batches = " << microBatches;
  if (failed(verifyStageBoundaries(emitError, stages, pp, "unit")))
    return failure();
  if (!unitTime || !stageTime)
    return emitError() << "unit_time and stage_time are needed";
  if (static_cast<size_t>(unitTime.size()) != units.size())
    return emitError() << "unit_time lists " << unitTime.size() << " times for "
                       << units.size() << " units";
  if (!units.empty() && stages.back() >= static_cast<int64_t>(units.size()))
    return emitError() << "stage " << pp - 1 << " starts at unit "
                       << stages.back() << " of " << units.size();
  if (static_cast<int64_t>(stageTime.size()) != pp ||
      static_cast<int64_t>(stageMemory.size()) != pp)
    return emitError() << "stage_time and stage_memory need one entry per "
                          "stage ("
                       << pp << "), got " << stageTime.size() << " and "
                       << stageMemory.size();
  return success();
}

/// One size per parameter, positive, all fitting in the padded bucket.
LogicalResult
ZeroShardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<FlatSymbolRefAttr> params,
                      ArrayRef<int64_t> sizes, int64_t padded) {
  if (params.empty())
    return emitError() << "a ZeRO bucket holds at least one parameter";
  if (params.size() != sizes.size())
    return emitError() << "params lists " << params.size()
                       << " parameters but sizes " << sizes.size();
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 1)
      return emitError() << "parameter sizes must be >= 1, got " << size;
    total += size;
  }
  if (total > padded)
    return emitError() << "the parameters' " << total
                       << " elements exceed the padded size " << padded;
  return success();
}

/// One size per global, none negative, no global twice.
LogicalResult
DeviceGlobalsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          ArrayRef<FlatSymbolRefAttr> globals,
                          ArrayRef<int64_t> bytes) {
  if (globals.size() != bytes.size())
    return emitError() << "globals lists " << globals.size()
                       << " globals but bytes " << bytes.size();
  llvm::SmallDenseSet<StringRef> seen;
  for (auto [global, size] : llvm::zip(globals, bytes)) {
    if (size < 0)
      return emitError() << "global " << global << " has " << size << " bytes";
    if (!seen.insert(global.getValue()).second)
      return emitError() << "global " << global << " is listed twice";
  }
  return success();
}

std::optional<int64_t> DeviceGlobalsAttr::lookup(StringRef name) const {
  for (auto [global, size] : llvm::zip(getGlobals(), getBytes()))
    if (global.getValue() == name)
      return size;
  return std::nullopt;
}

/// A cp group of `size` >= 1 ranks: the grid axes of the `axes` mask of a
/// 4-D grid, whose sizes multiply to `size`.
LogicalResult
ContextParallelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            int64_t size, int64_t mode, ArrayRef<int64_t> grid,
                            int64_t axes, int64_t seq) {
  if (seq < 0)
    return emitError() << "seq must be >= 0, got " << seq;
  if (size < 1)
    return emitError() << "size must be >= 1, got " << size;
  if (stringifyCpMode(mode).empty())
    return emitError() << "mode " << mode << " is no mgrt_cp_mode";
  if (grid.size() != 4 || llvm::any_of(grid, [](int64_t g) { return g < 1; }))
    return emitError() << "grid must be 4 sizes >= 1, got ["
                       << llvm::make_range(grid.begin(), grid.end()) << "]";
  if (axes < 1 || axes > 15)
    return emitError() << "axes must be a non-empty mask of the 4 grid axes, "
                          "got "
                       << axes;
  int64_t group = 1;
  for (int i = 0; i < 4; ++i)
    if (axes & (int64_t(1) << i))
      group *= grid[i];
  if (group != size)
    return emitError() << "the grid axes of mask " << axes << " hold " << group
                       << " ranks, not size = " << size;
  return success();
}

/// The nodes split into `parts` equal row blocks.
LogicalResult HaloAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t parts, int64_t nodes) {
  if (parts < 1 || nodes < 1)
    return emitError() << "parts and nodes must be >= 1, got parts = " << parts
                       << ", nodes = " << nodes;
  if (nodes % parts != 0)
    return emitError() << parts << " parts do not divide " << nodes << " nodes";
  return success();
}
