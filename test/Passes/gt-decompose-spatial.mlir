// RUN: megagraph-opt %s -split-input-file --gt-decompose | FileCheck %s --check-prefix=KEEP
// RUN: megagraph-opt %s -split-input-file --gt-decompose=keep-spatial-bias=false | FileCheck %s --check-prefix=DENSE
// RUN: megagraph-opt %s -split-input-file --gt-decompose=keep-attention=false | FileCheck %s --check-prefix=REF

// For the CPU kernels the spatial operands stay and the distance is narrowed
// to i16 once (saturating), for the forward and the gradient alike.
// KEEP-LABEL: func.func @pair
// KEEP-SAME:    (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x6x8xf32>, %[[D:.*]]: tensor<2x4x6xi64>, %[[T:.*]]: tensor<9x2xf32>, %[[B:.*]]: tensor<2x1x4x6xf32>, %[[DO:.*]]: tensor<2x4x8xf32>)
// KEEP-DAG:     %[[LO:.*]] = arith.constant -32768 : i64
// KEEP-DAG:     %[[HI:.*]] = arith.constant 32767 : i64
// KEEP:         %[[N:.*]] = linalg.generic {{.*}} ins(%[[D]] : tensor<2x4x6xi64>) outs(%{{.*}} : tensor<2x4x6xi16>)
// KEEP:           %[[X:.*]] = arith.maxsi %{{.*}}, %[[LO]] : i64
// KEEP:           %[[Y:.*]] = arith.minsi %[[X]], %[[HI]] : i64
// KEEP:           arith.trunci %[[Y]] : i64 to i16
// KEEP-NOT:     linalg.generic
// KEEP:         gt.attention %[[Q]], %[[K]], %[[K]] bias(%[[B]]) spatial(%[[N]], %[[T]]) heads = 2
// KEEP:         gt.attention_grad %[[DO]], %[[Q]], %[[K]], %[[K]] bias(%[[B]]) spatial(%[[N]], %[[T]]) heads = 2
//
// Elsewhere (CUDA) one gt.spatial_bias per distance and table (decomposed to
// its loop nest) plus the attention's own bias is the dense bias again;
// dbias sums the whole bias's gradient over the heads, dtable is the
// one-hot product of gt.spatial_bias's gradient rule.
// DENSE-LABEL: func.func @pair
// DENSE-NOT:     spatial(
// DENSE:         %[[SB:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4x6xi64>) outs(%{{.*}} : tensor<2x2x4x6xf32>)
// DENSE:         %[[W:.*]] = tosa.add %{{.*}}, %[[SB]] : (tensor<2x1x4x6xf32>, tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32>
// DENSE-NOT:     linalg.generic
// DENSE-NOT:     tosa.add
// DENSE:         gt.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%[[W]]) heads = 2
// DENSE:         %{{.*}}, %{{.*}}, %{{.*}}, %[[DW:.*]] = gt.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias(%[[W]]) heads = 2
// DENSE-DAG:     tosa.reduce_sum %[[DW]] {axis = 1 : i32} : (tensor<2x2x4x6xf32>) -> tensor<2x1x4x6xf32>
// DENSE-DAG:     tosa.matmul {{.*}} : (tensor<1x9x48xf32>, tensor<1x48x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x9x2xf32>
// DENSE:         return
//
// The reference path: no attention op remains.
// REF-LABEL: func.func @pair
// REF-NOT:     gt.attention
// REF:         return
func.func @pair(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %d: tensor<2x4x6xi64>, %t: tensor<9x2xf32>, %b: tensor<2x1x4x6xf32>, %do: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x4x6xf32>, tensor<9x2xf32>) {
  %o = gt.attention %q, %k, %k bias(%b) spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> tensor<2x4x8xf32>
  %dq, %dk, %dv, %db, %dt = gt.attention_grad %do, %q, %k, %k bias(%b) spatial(%d, %t) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>, tensor<2x4x6xi64>, tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>, tensor<9x2xf32>)
  return %o, %dq, %db, %dt : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x4x6xf32>, tensor<9x2xf32>
}

// -----

// i16 distances stay as they are; i8 ones are sign-extended. A table of more
// than 2^15 rows cannot be indexed by i16: its attention gets the dense bias
// even for the CPU (no clamp above: 39999 is beyond i16, not a wrapped
// -25537).
// KEEP-LABEL: func.func @widths
// KEEP-SAME:    (%[[X:.*]]: tensor<1x4x8xf32>, %[[D16:.*]]: tensor<4x4xi16>, %[[D8:.*]]: tensor<4x4xi8>, %[[T:.*]]: tensor<9x2xf32>, %[[BIG:.*]]: tensor<40000x2xf32>)
// KEEP:         %[[SB:.*]] = linalg.generic {{.*}} ins(%[[D16]] : tensor<4x4xi16>) outs(%{{.*}} : tensor<2x4x4xf32>)
// KEEP-NOT:       arith.minsi
// KEEP:           tensor.extract %[[BIG]]
// KEEP:         %[[N8:.*]] = linalg.generic {{.*}} ins(%[[D8]] : tensor<4x4xi8>)
// KEEP:           arith.extsi %{{.*}} : i8 to i16
// KEEP:         gt.attention %[[X]], %[[X]], %[[X]] spatial(%[[D16]], %[[T]])
// KEEP:         gt.attention %[[X]], %[[X]], %[[X]] spatial(%[[N8]], %[[T]])
// KEEP:         gt.attention %[[X]], %[[X]], %[[X]] bias(%[[SB]]) heads = 2 :
func.func @widths(%x: tensor<1x4x8xf32>, %d16: tensor<4x4xi16>, %d8: tensor<4x4xi8>, %t: tensor<9x2xf32>, %big: tensor<40000x2xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %a = gt.attention %x, %x, %x spatial(%d16, %t) heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<4x4xi16>, tensor<9x2xf32>) -> tensor<1x4x8xf32>
  %b = gt.attention %x, %x, %x spatial(%d8, %t) heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<4x4xi8>, tensor<9x2xf32>) -> tensor<1x4x8xf32>
  %c = gt.attention %x, %x, %x spatial(%d16, %big) heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<4x4xi16>, tensor<40000x2xf32>) -> tensor<1x4x8xf32>
  return %a, %b, %c : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}
