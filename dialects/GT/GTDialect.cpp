//===- GTDialect.cpp - The gt dialect ---------------------------*- C++ -*-===//
//
// Part of MegaGraph. Dialect registration, and the check that the
// attributes passes hand each other (GTNames.h) hold their typed attribute.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTDialect.h"
#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTMoaOps.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Dialect/GT/GTOps.h"

using namespace mlir;
using namespace megagraph::gt;

#include "megagraph/Dialect/GT/GTDialect.cpp.inc"

void GTDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "megagraph/Dialect/GT/GTOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "megagraph/Dialect/GT/GTMoaOps.cpp.inc"
      >();
  registerAttributes();
}

/// `gt.pipeline`, `gt.zero_shard`, `gt.zero_moment`, `gt.device_globals`
/// and `gt.cp` hold their typed attribute; other `gt.*` attributes are not
/// checked here.
LogicalResult GTDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto expect = [&](bool ok, StringRef mnemonic) -> LogicalResult {
    if (ok)
      return success();
    return op->emitError() << "'" << name << "' must be a #gt." << mnemonic
                           << " attribute, got " << attr.getValue();
  };
  Attribute value = attr.getValue();
  if (name == kPipelineAttr)
    return expect(isa<PipelineAttr>(value), "pipeline");
  if (name == kZeroShardAttr || name == kZeroMomentAttr)
    return expect(isa<ZeroShardAttr>(value), "zero_shard");
  if (name == kDeviceGlobalsAttr)
    return expect(isa<DeviceGlobalsAttr>(value), "device_globals");
  if (name == kContextParallelAttr)
    return expect(isa<ContextParallelAttr>(value), "cp");
  if (name == kHaloAttr)
    return expect(isa<HaloAttr>(value), "halo");
  if (name == kOverlapAttr) {
    StringRef opName = op->getName().getStringRef();
    if (!isa<UnitAttr>(value) ||
        (opName != "shard.reduce_scatter" && opName != "shard.all_reduce" &&
         opName != "shard.all_gather"))
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on a "
                                "shard.reduce_scatter, shard.all_reduce or "
                                "shard.all_gather";
    return success();
  }
  return success();
}
