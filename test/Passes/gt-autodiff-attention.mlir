// RUN: megagraph-opt %s --gt-autodiff -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-autodiff -split-input-file \
// RUN:   | megagraph-opt --gt-decompose -split-input-file | FileCheck %s --check-prefix=KEEP
// RUN: megagraph-opt %s --gt-autodiff -split-input-file \
// RUN:   | megagraph-opt --gt-decompose=keep-attention=false -split-input-file \
// RUN:   | FileCheck %s --check-prefix=REF

ml_program.global private mutable @wq(dense<0.5> : tensor<8x8xf32>) : tensor<8x8xf32> {gt.param}
ml_program.global private mutable @bias(dense<0.1> : tensor<2x4x4xf32>) : tensor<2x4x4xf32> {gt.param}

// gt.attention differentiates into one gt.attention_grad: dq, dk, dv and a
// dbias of the bias's own shape ([H, Sq, Sk], summed over the batch by the
// op itself). The mask is not differentiable. Kept by gt-decompose (it
// bufferizes into the backward kernel); decomposed with keep-attention=false.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[Q:.*]] = gt.linear %{{.*}}, %{{.*}} :
// CHECK:         gt.attention %[[Q]], %{{.*}}, %{{.*}} bias(%{{.*}}) mask(%{{.*}}) heads = 2
// CHECK:         %[[DQ:.*]], %{{.*}}, %{{.*}}, %[[DB:.*]] = gt.attention_grad %{{.*}}, %[[Q]], %{{.*}}, %{{.*}} bias(%{{.*}}) mask(%{{.*}}) heads = 2
// CHECK-SAME:      -> (tensor<3x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>, tensor<2x4x4xf32>)
// CHECK:         tosa.reshape %[[DQ]]
// CHECK:         return {{.*}}, %[[DB]] : {{.*}}, tensor<8x8xf32>, tensor<2x4x4xf32>
// KEEP-LABEL: func.func @main_grad
// KEEP:         gt.attention_grad
// REF-LABEL: func.func @main_grad
// REF-NOT:     gt.attention
// REF:         tosa.reduce_sum %{{.*}} {axis = 0 : i32} : (tensor<3x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// REF:         return
func.func @main(%x: tensor<3x4x8xf32> {gt.name = "x"}, %m: tensor<4x4xi1> {gt.name = "m"}) -> (tensor<3x4x8xf32> {gt.name = "logits"}) {
  %wq = ml_program.global_load @wq : tensor<8x8xf32>
  %b = ml_program.global_load @bias : tensor<2x4x4xf32>
  %q = gt.linear %x, %wq : (tensor<3x4x8xf32>, tensor<8x8xf32>) -> tensor<3x4x8xf32>
  %o = gt.attention %q, %x, %x bias(%b) mask(%m) heads = 2 : (tensor<3x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>, tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<3x4x8xf32>
  return %o : tensor<3x4x8xf32>
}

// -----

ml_program.global private mutable @wv(dense<0.5> : tensor<8x8xf32>) : tensor<8x8xf32> {gt.param}

// Without a bias there is no dbias result.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}} = gt.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} heads = 4 {scale = 5.000000e-01 : f32}
// CHECK-SAME:      -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
// KEEP-LABEL: func.func @main_grad
// KEEP:         gt.attention_grad
// REF-LABEL: func.func @main_grad
// REF-NOT:     gt.attention_grad
func.func @main(%x: tensor<1x4x8xf32> {gt.name = "x"}) -> (tensor<1x4x8xf32> {gt.name = "logits"}) {
  %wv = ml_program.global_load @wv : tensor<8x8xf32>
  %v = gt.linear %x, %wv : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %o = gt.attention %x, %x, %v heads = 4 {scale = 0.5 : f32} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// -----

ml_program.global private mutable @atoms(dense<0.5> : tensor<10x8xf32>) : tensor<10x8xf32> {gt.param}
ml_program.global private mutable @deg(dense<0.5> : tensor<5x8xf32>) : tensor<5x8xf32> {gt.param}

// Embedding tables: a [V, N] one-hot of the clamped ids times the flattened
// output gradient; with sum_features the one-hot rows are first summed over
// the features. The degree embedding passes dy through to its input.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[E:.*]] = gt.node_embedding %{{.*}}, %{{.*}} {sum_features}
// CHECK:         gt.degree_embedding %[[E]]
// CHECK:         tosa.maximum %{{.*}} : (tensor<1x6xi64>, tensor<1x1xi64>) -> tensor<1x6xi64>
// CHECK:         tosa.minimum %{{.*}} : (tensor<1x6xi64>, tensor<1x1xi64>) -> tensor<1x6xi64>
// CHECK:         tosa.equal %{{.*}} : (tensor<5x1xi64>, tensor<1x6xi64>) -> tensor<5x6xi1>
// CHECK:         %[[DDEG:.*]] = tosa.matmul %{{.*}} : (tensor<1x5x6xf32>, tensor<1x6x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x8xf32>
// CHECK:         tosa.equal %{{.*}} : (tensor<10x1xi64>, tensor<1x12xi64>) -> tensor<10x12xi1>
// CHECK:         tosa.reduce_sum %{{.*}} {axis = 2 : i32} : (tensor<10x6x2xf32>) -> tensor<10x6x1xf32>
// CHECK:         tosa.matmul %{{.*}} : (tensor<1x10x6xf32>, tensor<1x6x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x8xf32>
// CHECK:         return {{.*}} : {{.*}}, tensor<10x8xf32>, tensor<5x8xf32>
func.func @main(%ids: tensor<2x3x2xi64> {gt.name = "ids"}, %d: tensor<2x3xi64> {gt.name = "d"}) -> (tensor<2x3x8xf32> {gt.name = "logits"}) {
  %t = ml_program.global_load @atoms : tensor<10x8xf32>
  %dt = ml_program.global_load @deg : tensor<5x8xf32>
  %e = gt.node_embedding %ids, %t {sum_features} : (tensor<2x3x2xi64>, tensor<10x8xf32>) -> tensor<2x3x8xf32>
  %y = gt.degree_embedding %e, %d, %dt : (tensor<2x3x8xf32>, tensor<2x3xi64>, tensor<5x8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

ml_program.global private mutable @atoms(dense<0.5> : tensor<10x8xf32>) : tensor<10x8xf32> {gt.param}
ml_program.global private mutable @spatial(dense<0.5> : tensor<6x2xf32>) : tensor<6x2xf32> {gt.param}

// A plain lookup and the spatial bias: dy [B, H, Sq, Sk] is transposed to
// [B, Sq, Sk, H] to line up with the flattened distances.
// CHECK-LABEL: func.func @main_grad
// CHECK:         gt.attention_grad
// CHECK:         tosa.transpose %{{.*}} {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x2x3x3xf32>) -> tensor<2x3x3x2xf32>
// CHECK:         tosa.equal %{{.*}} : (tensor<6x1xi64>, tensor<1x18xi64>) -> tensor<6x18xi1>
// CHECK:         tosa.matmul %{{.*}} : (tensor<1x6x18xf32>, tensor<1x18x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x2xf32>
// CHECK:         tosa.equal %{{.*}} : (tensor<10x1xi64>, tensor<1x6xi64>) -> tensor<10x6xi1>
// CHECK:         return {{.*}} : {{.*}}, tensor<10x8xf32>, tensor<6x2xf32>
func.func @main(%ids: tensor<2x3xi64> {gt.name = "ids"}, %spd: tensor<2x3x3xi64> {gt.name = "spd"}) -> (tensor<2x3x8xf32> {gt.name = "logits"}) {
  %t = ml_program.global_load @atoms : tensor<10x8xf32>
  %st = ml_program.global_load @spatial : tensor<6x2xf32>
  %e = gt.node_embedding %ids, %t : (tensor<2x3xi64>, tensor<10x8xf32>) -> tensor<2x3x8xf32>
  %b = gt.spatial_bias %spd, %st : (tensor<2x3x3xi64>, tensor<6x2xf32>) -> tensor<2x2x3x3xf32>
  %o = gt.attention %e, %e, %e bias(%b) heads = 2 : (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x2x3x3xf32>) -> tensor<2x3x8xf32>
  return %o : tensor<2x3x8xf32>
}

// -----

ml_program.global private mutable @spatial2(dense<0.5> : tensor<6x2xf32>) : tensor<6x2xf32> {gt.param}

// The spatial bias read inside two attentions (gt-fuse-spatial-bias): each
// gradient returns the table's gradient dtable itself, and the two add up;
// no [B, H, Sq, Sk] gradient and no one-hot product. gt-decompose narrows
// the distance for the kernels; the reference path rebuilds the dense bias.
// CHECK-LABEL: func.func @main_grad
// CHECK-SAME:    %[[SPD:[^:]*]]: tensor<2x3x3xi64>
// CHECK:         %[[T:.*]] = ml_program.global_load @spatial2
// CHECK:         %[[A:.*]] = gt.attention %{{.*}}, %{{.*}}, %{{.*}} spatial(%[[SPD]], %[[T]]) heads = 2
// CHECK:         gt.attention %[[A]], %[[A]], %[[A]] spatial(%[[SPD]], %[[T]]) heads = 2
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %[[DT2:.*]] = gt.attention_grad %{{.*}}, %[[A]], %[[A]], %[[A]] spatial(%[[SPD]], %[[T]]) heads = 2
// CHECK-SAME:      -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<6x2xf32>)
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %[[DT1:.*]] = gt.attention_grad %{{.*}} spatial(%[[SPD]], %[[T]]) heads = 2
// CHECK:         %[[DT:.*]] = tosa.add %[[DT2]], %[[DT1]] : (tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<6x2xf32>
// CHECK-NOT:     tosa.matmul
// CHECK:         return {{.*}}%[[DT]] : {{.*}}tensor<6x2xf32>
// KEEP-LABEL: func.func @main_grad
// KEEP:         arith.trunci %{{.*}} : i64 to i16
// KEEP:         gt.attention_grad {{.*}} spatial(
// REF-LABEL: func.func @main_grad
// REF-NOT:     gt.attention
// REF:         tosa.matmul %{{.*}} : (tensor<1x6x18xf32>, tensor<1x18x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x2xf32>
func.func @main(%x: tensor<2x3x8xf32> {gt.name = "x"}, %spd: tensor<2x3x3xi64> {gt.name = "spd"}) -> (tensor<2x3x8xf32> {gt.name = "logits"}) {
  %st = ml_program.global_load @spatial2 : tensor<6x2xf32>
  %a = gt.attention %x, %x, %x spatial(%spd, %st) heads = 2 : (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x3xi64>, tensor<6x2xf32>) -> tensor<2x3x8xf32>
  %o = gt.attention %a, %a, %a spatial(%spd, %st) heads = 2 : (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x3xi64>, tensor<6x2xf32>) -> tensor<2x3x8xf32>
  return %o : tensor<2x3x8xf32>
}
