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
// broadcast over dim 0: summed); maximum: dy to a where a > b, to b where
// b > a, half of it to each where they tie (torch.maximum).
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[A:.*]] = ml_program.global_load @a
// CHECK:         %[[B:.*]] = ml_program.global_load @b
// CHECK:         %[[P:.*]] = tosa.greater %[[A]], %[[B]]
// CHECK:         %[[S:.*]] = tosa.select %[[P]], %[[A]], %[[B]]
// CHECK:         %[[GT:.*]] = tosa.greater %[[S]], %[[B]]
// CHECK:         %[[TIE:.*]] = tosa.equal %[[S]], %[[B]]
// CHECK:         %[[HALFC:.*]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1xf32>}>
// CHECK:         %[[HALF:.*]] = tosa.mul %[[DM:.*]], %[[HALFC]]
// CHECK:         %[[DA:.*]] = tosa.select %[[GT]], %[[DM]], %[[ZM:.*]] :
// CHECK:         tosa.select %[[TIE]], %[[HALF]], %[[DA]]
// CHECK:         %[[DB:.*]] = tosa.select %[[GT]], %[[ZM]], %[[DM]] :
// CHECK:         %[[DBT:.*]] = tosa.select %[[TIE]], %[[HALF]], %[[DB]]
// CHECK:         tosa.reduce_sum %[[DBT]] {axis = 0 : i32} : (tensor<4x3xf32>) -> tensor<1x3xf32>
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
// CHECK:         tosa.greater %[[C]], %[[W]]
// CHECK:         tosa.equal %[[W]], %[[C]]
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

// -----

ml_program.global private mutable @t(dense<0.5> : tensor<1x5x3xf32>) : tensor<1x5x3xf32> {gt.param}

// gather with a repeated index: the table's gradient is one-hot[N, K, W] @
// dy, so rows read twice sum both gradients; the indices get none.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[I:.*]] = "tosa.const"() <{values = dense<{{\[\[}}0, 2, 2, 4]]>
// CHECK:         gt.cross_entropy
// CHECK:         %[[DY:.*]] = tosa.reshape %{{.*}} -> tensor<1x4x3xf32>
// CHECK:         %[[ROWS:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}0], [1], [2], [3], [4]]]> : tensor<1x5x1xi32>}>
// CHECK:         %[[IT:.*]] = tosa.reshape %[[I]], %{{.*}} -> tensor<1x1x4xi32>
// CHECK:         %[[HIT:.*]] = tosa.equal %[[ROWS]], %[[IT]] : {{.*}} -> tensor<1x5x4xi1>
// CHECK:         %[[OH:.*]] = tosa.cast %[[HIT]] : {{.*}} -> tensor<1x5x4xf32>
// CHECK:         %[[G:.*]] = tosa.matmul %[[OH]], %[[DY]], {{.*}} -> tensor<1x5x3xf32>
// CHECK:         return {{.*}}, %[[G]] :
func.func @main() -> tensor<1x4x3xf32> {
  %t = ml_program.global_load @t : tensor<1x5x3xf32>
  %i = "tosa.const"() <{values = dense<[[0, 2, 2, 4]]> : tensor<1x4xi32>}> : () -> tensor<1x4xi32>
  %y = tosa.gather %t, %i : (tensor<1x5x3xf32>, tensor<1x4xi32>) -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// reduce_max: dy to the positions equal to the maximum, split evenly among
// ties (here all three of each row tie); the tie count is at least one, so
// that a row whose maximum is NaN (no entry equals it) gets no gradient
// rather than 0 * inf.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[W:.*]] = ml_program.global_load @w
// CHECK:         %[[Y:.*]] = tosa.reduce_max %[[W]] {axis = 1 : i32}
// CHECK:         gt.cross_entropy
// CHECK:         %[[HIT:.*]] = tosa.equal %[[W]], %[[Y]] : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xi1>
// CHECK:         %[[ONES:.*]] = tosa.cast %[[HIT]] : {{.*}} -> tensor<4x3xf32>
// CHECK:         %[[ONE:.*]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK:         %[[TIES:.*]] = tosa.reduce_sum %[[ONES]] {axis = 1 : i32}
// CHECK:         %[[COUNT:.*]] = tosa.maximum %[[TIES]], %[[ONE]] : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
// CHECK:         %[[INV:.*]] = tosa.reciprocal %[[COUNT]]
// CHECK:         %[[SHARE:.*]] = tosa.mul %{{.*}}, %[[INV]]
// CHECK:         %[[G:.*]] = tosa.mul %[[ONES]], %[[SHARE]]
// CHECK:         return {{.*}}, %[[G]] :
func.func @main() -> tensor<4x1xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %y = tosa.reduce_max %w {axis = 1 : i32} : (tensor<4x3xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

ml_program.global private mutable @a(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}
ml_program.global private mutable @b(dense<2.0> : tensor<1x3xf32>) : tensor<1x3xf32> {gt.param}

// pow: da = dy b a^(b-1) (0 where b = 0), db = dy a^b log(a) (0 where a = 0
// and b >= 0), db summed over the broadcast rows.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[A:.*]] = ml_program.global_load @a
// CHECK:         %[[B:.*]] = ml_program.global_load @b
// CHECK:         %[[Z:.*]] = tosa.pow %[[A]], %[[B]]
// CHECK:         gt.cross_entropy
// CHECK:         %[[BM1:.*]] = tosa.sub %[[B]], %{{.*}} : (tensor<1x3xf32>, tensor<1x1xf32>)
// CHECK:         %[[P:.*]] = tosa.pow %[[A]], %[[BM1]] : {{.*}} -> tensor<4x3xf32>
// CHECK:         %[[B0:.*]] = tosa.equal %[[B]], %{{.*}} -> tensor<1x3xi1>
// CHECK:         %[[DA:.*]] = tosa.select %[[B0]], %{{.*}}, %{{.*}} -> tensor<4x3xf32>
// CHECK:         %[[LOG:.*]] = tosa.log %[[A]]
// CHECK:         %[[DB:.*]] = tosa.select %{{.*}}, %{{.*}}, %{{.*}} -> tensor<4x3xf32>
// CHECK:         %[[DBS:.*]] = tosa.reduce_sum %[[DB]] {axis = 0 : i32} : (tensor<4x3xf32>) -> tensor<1x3xf32>
// CHECK:         return {{.*}}, %[[DA]], %[[DBS]] :
func.func @main() -> tensor<4x3xf32> {
  %a = ml_program.global_load @a : tensor<4x3xf32>
  %b = ml_program.global_load @b : tensor<1x3xf32>
  %y = tosa.pow %a, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<2x3xf32>) : tensor<2x3xf32> {gt.param}

// tile: dy viewed as [m0, d0, m1, d1] summed over the copies.
// CHECK-LABEL: func.func @main_grad
// CHECK:         gt.cross_entropy
// CHECK:         %[[V:.*]] = tosa.reshape %{{.*}} -> tensor<2x2x3x3xf32>
// CHECK:         %[[S0:.*]] = tosa.reduce_sum %[[V]] {axis = 0 : i32}
// CHECK:         %[[S2:.*]] = tosa.reduce_sum %[[S0]] {axis = 2 : i32} : {{.*}} -> tensor<1x2x1x3xf32>
// CHECK:         %[[G:.*]] = tosa.reshape %[[S2]], %{{.*}} -> tensor<2x3xf32>
// CHECK:         return {{.*}}, %[[G]] :
func.func @main() -> tensor<4x9xf32> {
  %w = ml_program.global_load @w : tensor<2x3xf32>
  %m = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %y = tosa.tile %w, %m : (tensor<2x3xf32>, !tosa.shape<2>) -> tensor<4x9xf32>
  return %y : tensor<4x9xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// pad then reverse: the interior slice of dy, reversed back.
// CHECK-LABEL: func.func @main_grad
// CHECK:         gt.cross_entropy
// CHECK:         %[[SIZE:.*]] = tosa.const_shape {values = dense<[4, 3]>
// CHECK:         %[[START:.*]] = tosa.const_shape {values = dense<[1, 0]>
// CHECK:         %[[IN:.*]] = tosa.slice %{{.*}}, %[[START]], %[[SIZE]] : (tensor<5x5xf32>
// CHECK:         %[[G:.*]] = tosa.reverse %[[IN]] {axis = 0 : i32}
// CHECK:         return {{.*}}, %[[G]] :
func.func @main() -> tensor<5x5xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %y = tosa.reverse %w {axis = 0 : i32} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = tosa.const_shape {values = dense<[1, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %c = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %z = tosa.pad %y, %p, %c : (tensor<4x3xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<5x5xf32>
  return %z : tensor<5x5xf32>
}

// -----

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// Comparisons give no gradient: only the selected branch's does.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[W:.*]] = ml_program.global_load @w
// CHECK:         %[[C:.*]] = tosa.greater %[[W]]
// CHECK:         gt.cross_entropy
// CHECK:         %[[G:.*]] = tosa.select %[[C]], %{{.*}}, %{{.*}}
// CHECK-NOT:     tosa.add
// CHECK:         return {{.*}}, %[[G]] :
func.func @main() -> tensor<4x3xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %z = "tosa.const"() <{values = dense<0.25> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = tosa.greater %w, %z : (tensor<4x3xf32>, tensor<1x1xf32>) -> tensor<4x3xi1>
  %f = "tosa.const"() <{values = dense<0.0> : tensor<4x3xf32>}> : () -> tensor<4x3xf32>
  %y = tosa.select %c, %w, %f : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
