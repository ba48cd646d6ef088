//===- GlobalAddressCalls.cpp - Globals' storage from the runtime ---------===//
//
// Part of MegaGraph. See megagraph/Passes/GlobalAddressCalls.h.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Passes/GlobalAddressCalls.h"

using namespace mlir;

void megagraph::redirectGlobalAddresses(
    ModuleOp module, StringRef callee,
    ArrayRef<std::pair<LLVM::AddressOfOp, int64_t>> addresses) {
  if (addresses.empty())
    return;
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(callee);
  if (!decl) {
    b.setInsertionPointToStart(module.getBody());
    decl =
        LLVM::LLVMFuncOp::create(b, module.getLoc(), callee,
                                 LLVM::LLVMFunctionType::get(ptr, {ptr, i64}));
  }
  for (auto [op, bytes] : addresses) {
    b.setInsertionPointAfter(op);
    Value size = LLVM::ConstantOp::create(b, op.getLoc(), i64,
                                          b.getI64IntegerAttr(bytes));
    auto call = LLVM::CallOp::create(b, op.getLoc(), decl,
                                     ValueRange{op.getResult(), size});
    op.getResult().replaceAllUsesExcept(call.getResult(), call);
  }
}
