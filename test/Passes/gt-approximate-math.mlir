// RUN: megagraph-opt %s --gt-approximate-math | FileCheck %s

// f32 erf and tanh become arith code (no libm call left for the loop
// vectorizer to stop at); other element types keep the math op.

// CHECK-LABEL: func.func @gelu_f32
// CHECK-NOT: math.erf
// CHECK: arith.divf
// CHECK-NOT: math.erf
// CHECK: return
func.func @gelu_f32(%x: f32) -> f32 {
  %c = arith.constant 0.707106769 : f32
  %h = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %s = arith.mulf %x, %c : f32
  %e = math.erf %s : f32
  %p = arith.addf %e, %one : f32
  %q = arith.mulf %x, %p : f32
  %y = arith.mulf %q, %h : f32
  return %y : f32
}

// CHECK-LABEL: func.func @tanh_f32
// CHECK-NOT: math.tanh
// CHECK: return
func.func @tanh_f32(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  return %y : f32
}

// CHECK-LABEL: func.func @other_types
// CHECK: math.erf %{{.*}} : f64
// CHECK: math.erf %{{.*}} : f16
// CHECK: math.tanh %{{.*}} : f64
func.func @other_types(%a: f64, %b: f16) -> (f64, f16, f64) {
  %x = math.erf %a : f64
  %y = math.erf %b : f16
  %z = math.tanh %a : f64
  return %x, %y, %z : f64, f16, f64
}
