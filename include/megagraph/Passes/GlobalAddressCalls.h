//===- GlobalAddressCalls.h - Globals' storage from the runtime -*- C++ -*-===//
//
// Part of MegaGraph. Shared by gt-gpu-device-memory (the device copies of
// the module's globals) and gt-stage-globals (each pipeline rank's own
// copies of its stage's state): on the LLVM dialect, the uses of selected
// `llvm.mlir.addressof` ops are redirected to the pointer a runtime call
// `ptr callee(ptr address, i64 bytes)` returns for that global.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_GLOBALADDRESSCALLS_H
#define MEGAGRAPH_PASSES_GLOBALADDRESSCALLS_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"

#include <utility>

namespace megagraph {

/// Declares `callee` in `module` if it is not there yet, then, after each
/// address op of `addresses` (with its global's size in bytes), calls it
/// with the address and the size and makes every other user of the address
/// take the call's result instead.
void redirectGlobalAddresses(
    mlir::ModuleOp module, llvm::StringRef callee,
    llvm::ArrayRef<std::pair<mlir::LLVM::AddressOfOp, int64_t>> addresses);

} // namespace megagraph

#endif // MEGAGRAPH_PASSES_GLOBALADDRESSCALLS_H
