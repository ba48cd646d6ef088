// The executable's entry point is LLVM globals and functions in the model's
// object file (lib/Target/Common/EntryTable.cpp), not generated source: the
// mgrt_model_info @mgrt_model with the tensor tables (names, dtypes,
// shapes, roles) and main(), which the driver's --help reads back.
// RUN: megagraph-compile %s --emit=exe -o %t.exe
// RUN: nm %t.exe | FileCheck %s --check-prefix=SYMS
// SYMS-DAG: {{[dDrR]}} mgrt_model
// SYMS-DAG: T main
// SYMS-DAG: T mgrt_infer_main
// RUN: %t.exe --help | FileCheck %s
// CHECK: entry-table (
// CHECK: inputs:
// CHECK-NEXT:   x: f32 [1, 4, 3]
// CHECK-NEXT:   spd: i64 [1, 4, 4]
// CHECK-NEXT:   mask: bool [1, 4]
// CHECK-NEXT: outputs:
// CHECK-NEXT:   logits: f32 [1, 4, 2]
// CHECK-NEXT:   spd_out: i64 [1, 4, 4]

// The LLVM IR of an executable is not printed: --emit=llvm and --emit=obj
// have no main(), so an object file links with another entry point.
// RUN: megagraph-compile %s --emit=llvm -o - | FileCheck %s --check-prefix=LL
// LL-NOT: @mgrt_model
// LL-NOT: define {{.*}} @main(

ml_program.global private mutable @w(dense<0.5> : tensor<1x3x2xf32>) : tensor<1x3x2xf32> {gt.param}

func.func @main(%x: tensor<1x4x3xf32> {gt.name = "x"}, %spd: tensor<1x4x4xi64> {gt.name = "spd"}, %mask: tensor<1x4xi1> {gt.name = "mask"}) -> (tensor<1x4x2xf32> {gt.name = "logits"}, tensor<1x4x4xi64> {gt.name = "spd_out"}) {
  %w = ml_program.global_load @w : tensor<1x3x2xf32>
  %zero = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %x, %w, %zero, %zero : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %y, %spd : tensor<1x4x2xf32>, tensor<1x4x4xi64>
}
