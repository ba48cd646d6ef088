// RUN: megagraph-opt %s --gt-context-parallel="cp=2" | FileCheck %s

// nn.MultiheadAttention-style heads: the node dimension is carried through
// tosa.transpose (permuted), tosa.reshape (heads split / merged, and the
// sequence-first [S, B, D] rows merged with the batch as [1, S * B, D] for a
// tosa.matmul, and back), a q/k/v slice of a packed projection, and
// gt.linear on [S, B, D]. Reshape and slice shapes follow the S / cp rows.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x8xf32>, %[[W:.*]]: tensor<8x24xf32>, %[[B:.*]]: tensor<24xf32>, %[[O:.*]]: tensor<1x8x8xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[T:.*]] = tosa.transpose %[[X]] {perms = array<i32: 1, 0, 2>} : (tensor<2x4x8xf32>) -> tensor<4x2x8xf32>
// CHECK: %[[P:.*]] = gt.linear %[[T]], %[[W]], %[[B]] : (tensor<4x2x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<4x2x24xf32>
// CHECK: %[[SZ:.*]] = tosa.const_shape {values = dense<[4, 2, 8]> : tensor<3xindex>}
// CHECK: tosa.slice %[[P]], %{{.*}}, %[[SZ]] : (tensor<4x2x24xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<4x2x8xf32>
// CHECK: tosa.const_shape {values = dense<[4, 2, 2, 4]> : tensor<4xindex>}
// CHECK: tosa.reshape {{.*}} -> tensor<4x2x2x4xf32>
// CHECK: tosa.transpose {{.*}} {perms = array<i32: 1, 0, 2, 3>} : (tensor<4x2x2x4xf32>) -> tensor<2x4x2x4xf32>
// CHECK: tosa.reshape {{.*}} -> tensor<2x4x8xf32>
// CHECK: gt.attention {{.*}} {gt.cp = #gt.cp<{{.*}}>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: tosa.transpose {{.*}} -> tensor<4x2x8xf32>
// CHECK: tosa.const_shape {values = dense<[1, 8, 8]> : tensor<3xindex>}
// CHECK: tosa.reshape {{.*}} -> tensor<1x8x8xf32>
// CHECK: tosa.matmul {{.*}}, %[[O]], {{.*}} : (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
// CHECK: tosa.const_shape {values = dense<[4, 2, 8]> : tensor<3xindex>}
// CHECK: tosa.reshape {{.*}} -> tensor<4x2x8xf32>
// CHECK: tosa.transpose {{.*}} -> tensor<2x4x8xf32>
func.func @main(%x: tensor<2x8x8xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %o: tensor<1x8x8xf32>) -> tensor<2x8x8xf32> {
  %t = tosa.transpose %x {perms = array<i32: 1, 0, 2>} : (tensor<2x8x8xf32>) -> tensor<8x2x8xf32>
  %p = gt.linear %t, %w, %b : (tensor<8x2x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<8x2x24xf32>
  %st = tosa.const_shape {values = dense<[0, 0, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sz = tosa.const_shape {values = dense<[8, 2, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %q = tosa.slice %p, %st, %sz : (tensor<8x2x24xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<8x2x8xf32>
  %s4 = tosa.const_shape {values = dense<[8, 2, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %h = tosa.reshape %q, %s4 : (tensor<8x2x8xf32>, !tosa.shape<4>) -> tensor<8x2x2x4xf32>
  %ht = tosa.transpose %h {perms = array<i32: 1, 0, 2, 3>} : (tensor<8x2x2x4xf32>) -> tensor<2x8x2x4xf32>
  %s3 = tosa.const_shape {values = dense<[2, 8, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %qb = tosa.reshape %ht, %s3 : (tensor<2x8x2x4xf32>, !tosa.shape<3>) -> tensor<2x8x8xf32>
  %a = gt.attention %qb, %qb, %qb heads = 2 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %at = tosa.transpose %a {perms = array<i32: 1, 0, 2>} : (tensor<2x8x8xf32>) -> tensor<8x2x8xf32>
  %sm = tosa.const_shape {values = dense<[1, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %m = tosa.reshape %at, %sm : (tensor<8x2x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %mm = tosa.matmul %m, %o, %zp, %zp : (tensor<1x16x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x8xf32>
  %sb = tosa.const_shape {values = dense<[8, 2, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %back = tosa.reshape %mm, %sb : (tensor<1x16x8xf32>, !tosa.shape<3>) -> tensor<8x2x8xf32>
  %r = tosa.transpose %back {perms = array<i32: 1, 0, 2>} : (tensor<8x2x8xf32>) -> tensor<2x8x8xf32>
  return %r : tensor<2x8x8xf32>
}
