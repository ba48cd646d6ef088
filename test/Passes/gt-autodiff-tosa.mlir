// RUN: megagraph-opt %s --gt-autodiff -split-input-file | FileCheck %s

// Gradient rules of the TOSA ops (external models of GradientOpInterface).
// Each case feeds a parameter global through one op into the logits; the
// numerics of every rule are checked against PyTorch autograd in
// test/E2E/gradients.test (the examples and the `ops` model).

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// rsqrt: dx = dy * -0.5 * y^3 (y the forward result).
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[W:.*]] = ml_program.global_load @w
// CHECK:         %[[Y:.*]] = tosa.rsqrt %[[W]]
// CHECK:         %[[Y2:.*]] = tosa.mul %[[Y]], %[[Y]]
// CHECK:         %[[Y3:.*]] = tosa.mul %[[Y2]], %[[Y]]
// CHECK:         %[[D:.*]] = tosa.mul %[[Y3]], %{{.*}} : (tensor<4x3xf32>, tensor<1x1xf32>
// CHECK:         %[[G:.*]] = tosa.mul %{{.*}}, %[[D]]
// CHECK:         return {{.*}}, %[[G]] :
func.func @main() -> tensor<4x3xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %y = tosa.rsqrt %w : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// reciprocal: -y^2; exp: y; log: 1/x; tanh: 1 - y^2; sigmoid: y (1 - y),
// chained (the gradient of each feeds the next rule).
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[W:.*]] = ml_program.global_load @w
// CHECK:         %[[R:.*]] = tosa.reciprocal %[[W]]
// CHECK:         %[[E:.*]] = tosa.exp %[[R]]
// CHECK:         %[[L:.*]] = tosa.log %[[E]]
// CHECK:         %[[T:.*]] = tosa.tanh %[[L]]
// CHECK:         %[[S:.*]] = tosa.sigmoid %[[T]]
// sigmoid
// CHECK:         tosa.sub %{{.*}}, %[[S]]
// CHECK:         tosa.mul %[[S]]
// tanh
// CHECK:         tosa.mul %[[T]], %[[T]]
// log
// CHECK:         tosa.reciprocal %[[E]]
// exp: dy * y
// CHECK:         tosa.mul %{{.*}}, %[[E]]
// reciprocal
// CHECK:         tosa.mul %[[R]], %[[R]]
// CHECK:         return
func.func @main() -> tensor<4x3xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %r = tosa.reciprocal %w : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %e = tosa.exp %r : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = tosa.log %e : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %t = tosa.tanh %l : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = tosa.sigmoid %t : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// clamp (ReLU): the gradient passes where min < x < max.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[W:.*]] = ml_program.global_load @w
// CHECK:         %[[LO:.*]] = tosa.greater %[[W]], %{{.*}} : (tensor<4x3xf32>, tensor<1x1xf32>) -> tensor<4x3xi1>
// CHECK:         %[[HI:.*]] = tosa.greater %{{.*}}, %[[W]] : (tensor<1x1xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
// CHECK:         %[[IN:.*]] = tosa.logical_and %[[LO]], %[[HI]]
// CHECK:         %[[G:.*]] = tosa.select %[[IN]], %{{.*}}, %{{.*}} : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         return {{.*}}, %[[G]] :
func.func @main() -> tensor<4x3xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %y = tosa.clamp %w {min_val = 0.0 : f32, max_val = 0x7F800000 : f32} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @a(dense<0.5> : tensor<2x4x5xf32>) : tensor<2x4x5xf32> {gt.param}
ml_program.global private mutable @b(dense<0.25> : tensor<2x5x3xf32>) : tensor<2x5x3xf32> {gt.param}

// matmul: da = dc b^T, db = a^T dc (batched); the zero points get none.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[A:.*]] = ml_program.global_load @a
// CHECK:         %[[B:.*]] = ml_program.global_load @b
// CHECK:         %[[BT:.*]] = tosa.transpose %[[B]] {perms = array<i32: 0, 2, 1>} : (tensor<2x5x3xf32>) -> tensor<2x3x5xf32>
// CHECK:         %[[DA:.*]] = tosa.matmul %[[DC:.*]], %[[BT]], {{.*}} -> tensor<2x4x5xf32>
// CHECK:         %[[AT:.*]] = tosa.transpose %[[A]] {perms = array<i32: 0, 2, 1>} : (tensor<2x4x5xf32>) -> tensor<2x5x4xf32>
// CHECK:         %[[DB:.*]] = tosa.matmul %[[AT]], %[[DC]], {{.*}} -> tensor<2x5x3xf32>
// CHECK:         return {{.*}}, %[[DA]], %[[DB]] :
func.func @main() -> tensor<2x4x3xf32> {
  %a = ml_program.global_load @a : tensor<2x4x5xf32>
  %b = ml_program.global_load @b : tensor<2x5x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.matmul %a, %b, %zp, %zp : (tensor<2x4x5xf32>, tensor<2x5x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x3xf32>
  return %c : tensor<2x4x3xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x9xf32>) : tensor<4x9xf32> {gt.param}

// slice: dy zero-padded back (start 1..2 of dim 0, 3..5 of dim 1).
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[PAD:.*]] = tosa.const_shape {values = dense<[1, 1, 3, 3]> : tensor<4xindex>}
// CHECK:         %[[G:.*]] = tosa.pad %{{.*}}, %[[PAD]], %{{.*}} : (tensor<2x3xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<4x9xf32>
// CHECK:         return {{.*}}, %[[G]] :
func.func @main() -> tensor<2x3xf32> {
  %w = ml_program.global_load @w : tensor<4x9xf32>
  %start = tosa.const_shape {values = dense<[1, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %y = tosa.slice %w, %start, %size : (tensor<4x9xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

ml_program.global private mutable @a(dense<0.5> : tensor<4x2xf32>) : tensor<4x2xf32> {gt.param}
ml_program.global private mutable @b(dense<0.25> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// concat along axis 1: each input gets its slice of dy.
// CHECK-LABEL: func.func @main_grad
// CHECK-DAG:     %[[S0:.*]] = tosa.const_shape {values = dense<0> : tensor<2xindex>}
// CHECK-DAG:     %[[N0:.*]] = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>}
// CHECK:         %[[DA:.*]] = tosa.slice %[[DY:.*]], %[[S0]], %[[N0]] : (tensor<4x5xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<4x2xf32>
// CHECK-DAG:     %[[S1:.*]] = tosa.const_shape {values = dense<[0, 2]> : tensor<2xindex>}
// CHECK-DAG:     %[[N1:.*]] = tosa.const_shape {values = dense<[4, 3]> : tensor<2xindex>}
// CHECK:         %[[DB:.*]] = tosa.slice %[[DY]], %[[S1]], %[[N1]] : (tensor<4x5xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<4x3xf32>
// CHECK:         return {{.*}}, %[[DA]], %[[DB]] :
func.func @main() -> tensor<4x5xf32> {
  %a = ml_program.global_load @a : tensor<4x2xf32>
  %b = ml_program.global_load @b : tensor<4x3xf32>
  %y = tosa.concat %a, %b {axis = 1 : i32} : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

ml_program.global private mutable @a(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.25> : tensor<1x3xf32>) : tensor<1x3xf32> {gt.param}

// select: dy to a where the predicate holds, to b elsewhere (b was
// broadcast over dim 0: summed); maximum: dy to a where a >= b.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[A:.*]] = ml_program.global_load @a
// CHECK:         %[[B:.*]] = ml_program.global_load @b
// CHECK:         %[[P:.*]] = tosa.greater %[[A]], %[[B]]
// CHECK:         %[[S:.*]] = tosa.select %[[P]], %[[A]], %[[B]]
// CHECK:         %[[GE:.*]] = tosa.greater_equal %[[S]], %[[B]]
// CHECK:         tosa.select %[[GE]]
// CHECK:         tosa.select %[[P]], %[[DY:.*]], %[[Z:.*]] : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         %[[DBS:.*]] = tosa.select %[[P]], %[[Z]], %[[DY]]
// CHECK:         tosa.reduce_sum %[[DBS]] {axis = 0 : i32} : (tensor<4x3xf32>) -> tensor<1x3xf32>
// CHECK:         return
func.func @main() -> tensor<4x3xf32> {
  %a = ml_program.global_load @a : tensor<4x3xf32>
  %b = ml_program.global_load @b : tensor<1x3xf32>
  %p = tosa.greater %a, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xi1>
  %s = tosa.select %p, %a, %b : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  %m = tosa.maximum %s, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %m : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// minimum with a constant, negate, reduce_sum (broadcast back), and a
// float-to-float cast (cast back); the constant gets no gradient.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[W:.*]] = ml_program.global_load @w
// CHECK:         %[[M:.*]] = tosa.minimum %[[W]], %[[C:.*]] :
// CHECK:         %[[N:.*]] = tosa.negate %[[M]]
// CHECK:         %[[R:.*]] = tosa.reduce_sum %[[N]] {axis = 1 : i32}
// CHECK:         tosa.cast %{{.*}} : (tensor<4x1xf16>) -> tensor<4x1xf32>
// CHECK:         tosa.add %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK:         tosa.greater_equal %[[C]], %[[W]]
// CHECK:         return
func.func @main() -> tensor<4x1xf16> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %c = "tosa.const"() <{values = dense<0.7> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %m = tosa.minimum %w, %c : (tensor<4x3xf32>, tensor<1x1xf32>) -> tensor<4x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %n = tosa.negate %m, %zp, %zp : (tensor<4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x3xf32>
  %r = tosa.reduce_sum %n {axis = 1 : i32} : (tensor<4x3xf32>) -> tensor<4x1xf32>
  %h = tosa.cast %r : (tensor<4x1xf32>) -> tensor<4x1xf16>
  return %h : tensor<4x1xf16>
}
