// RUN: megagraph-opt %s -split-input-file --gt-fuse-spatial-bias | FileCheck %s
// Idempotent: a second run changes nothing.
// RUN: megagraph-opt %s -split-input-file --gt-fuse-spatial-bias --gt-fuse-spatial-bias | FileCheck %s

// One spatial bias shared by two attentions (Graphormer's layers): both read
// the distance and the table; the gt.spatial_bias goes. Discardable
// attributes stay.
// CHECK-LABEL: func.func @shared
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x8xf32>, %[[D:.*]]: tensor<2x4x4xi64>, %[[T:.*]]: tensor<9x2xf32>, %[[M:.*]]: tensor<4x4xi1>)
// CHECK-NOT:     gt.spatial_bias
// CHECK:         %[[A:.*]] = gt.attention %[[X]], %[[X]], %[[X]] spatial(%[[D]], %[[T]]) heads = 2 {tag = 1 : i64}
// CHECK:         gt.attention %[[A]], %[[A]], %[[A]] mask(%[[M]]) spatial(%[[D]], %[[T]]) heads = 2 {scale = 5.000000e-01 : f32}
func.func @shared(%x: tensor<2x4x8xf32>, %d: tensor<2x4x4xi64>, %t: tensor<9x2xf32>, %m: tensor<4x4xi1>) -> tensor<2x4x8xf32> {
  %b = gt.spatial_bias %d, %t : (tensor<2x4x4xi64>, tensor<9x2xf32>) -> tensor<2x2x4x4xf32>
  %a = gt.attention %x, %x, %x bias(%b) heads = 2 {tag = 1} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  %o = gt.attention %a, %a, %a bias(%b) mask(%m) heads = 2 {scale = 0.5 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Added to another bias that broadcasts over the heads (either side of the
// sum): the attention keeps that bias beside the spatial operands; a
// [Sq, Sk] distance gives an [H, Sq, Sk] spatial bias.
// CHECK-LABEL: func.func @sum
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x8xf32>, %[[D:.*]]: tensor<2x4x4xi64>, %[[D2:.*]]: tensor<4x4xi32>, %[[T:.*]]: tensor<9x2xf32>, %[[E:.*]]: tensor<2x1x4x4xf32>, %[[F:.*]]: tensor<2x4x4xf32>)
// CHECK-NOT:     gt.spatial_bias
// CHECK-NOT:     tosa.add
// CHECK:         gt.attention %[[X]], %[[X]], %[[X]] bias(%[[E]]) spatial(%[[D]], %[[T]]) heads = 2
// CHECK:         gt.attention %[[X]], %[[X]], %[[X]] bias(%[[F]]) spatial(%[[D2]], %[[T]]) heads = 2
func.func @sum(%x: tensor<2x4x8xf32>, %d: tensor<2x4x4xi64>, %d2: tensor<4x4xi32>, %t: tensor<9x2xf32>, %e: tensor<2x1x4x4xf32>, %f: tensor<2x4x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %sb = gt.spatial_bias %d, %t : (tensor<2x4x4xi64>, tensor<9x2xf32>) -> tensor<2x2x4x4xf32>
  %b = tosa.add %e, %sb : (tensor<2x1x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %o = gt.attention %x, %x, %x bias(%b) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  %sb2 = gt.spatial_bias %d2, %t : (tensor<4x4xi32>, tensor<9x2xf32>) -> tensor<2x4x4xf32>
  %b2 = tosa.add %sb2, %f : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o2 = gt.attention %x, %x, %x bias(%b2) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>) -> tensor<2x4x8xf32>
  return %o, %o2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// Left as they are: a sum that broadcasts the spatial bias, a sum whose
// other bias broadcasts over the queries (not an attention bias), an
// attention whose gradient was taken with the dense bias. A spatial bias
// something else reads stays.
// CHECK-LABEL: func.func @kept
// CHECK:         %[[SB:.*]] = gt.spatial_bias
// CHECK:         %[[B1:.*]] = tosa.add %{{.*}}, %[[SB]]
// CHECK:         gt.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%[[B1]]) heads = 2 :
// CHECK:         %[[B2:.*]] = tosa.add %{{.*}}, %[[SB]]
// CHECK:         gt.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%[[B2]]) heads = 2 :
// CHECK:         gt.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%[[SB]]) heads = 2 {scale = 2.500000e-01 : f32} :
// CHECK:         gt.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias(%[[SB]]) heads = 2 {scale = 2.500000e-01 : f32} :
// CHECK-NOT:     spatial(
func.func @kept(%x: tensor<2x4x8xf32>, %d: tensor<1x4x4xi64>, %t: tensor<9x2xf32>, %e: tensor<2x2x4x4xf32>, %r: tensor<1x2x1x4xf32>, %do: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %sb = gt.spatial_bias %d, %t : (tensor<1x4x4xi64>, tensor<9x2xf32>) -> tensor<1x2x4x4xf32>
  %b1 = tosa.add %e, %sb : (tensor<2x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %o1 = gt.attention %x, %x, %x bias(%b1) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  %b2 = tosa.add %r, %sb : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o2 = gt.attention %x, %x, %x bias(%b2) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x2x4x4xf32>) -> tensor<2x4x8xf32>
  %o3 = gt.attention %x, %x, %x bias(%sb) heads = 2 {scale = 0.25 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x2x4x4xf32>) -> tensor<2x4x8xf32>
  %dq, %dk, %dv, %db = gt.attention_grad %do, %x, %x, %x bias(%sb) heads = 2 {scale = 0.25 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x2x4x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x2x4x4xf32>)
  return %o1, %o2, %o3, %db : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// Context parallel (after gt-context-parallel, cp = 2, S = 4): each rank's
// spatial bias is built from its [B, S/cp, S] = [2, 2, 4] distance rows;
// the attention reads those rows and the table instead, with all S key
// columns (the cp kernels read each key block's columns), and keeps gt.cp.
// With uneven blocks (cp = 3, S = 7: ceil(7 / 3) = 3 rows, seq = 7) and
// another bias beside the spatial one, the same.
// CHECK-LABEL: func.func @context_parallel
// CHECK-SAME:    (%[[X:.*]]: tensor<2x2x8xf32>, %[[D:.*]]: tensor<2x2x4xi64>, %[[T:.*]]: tensor<9x2xf32>, %[[Y:.*]]: tensor<1x3x8xf32>, %[[D3:.*]]: tensor<1x3x7xi64>, %[[E:.*]]: tensor<1x1x3x7xf32>)
// CHECK-NOT:     gt.spatial_bias
// CHECK-NOT:     tosa.add
// CHECK:         gt.attention %[[X]], %[[X]], %[[X]] spatial(%[[D]], %[[T]]) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ring, grid = [1, 2, 1, 1], axes = 2>}
// CHECK-SAME:      -> tensor<2x2x8xf32>
// CHECK:         gt.attention %[[Y]], %[[Y]], %[[Y]] bias(%[[E]]) spatial(%[[D3]], %[[T]]) heads = 2 {gt.cp = #gt.cp<size = 3, mode = allgather, grid = [1, 3, 1, 1], axes = 2, seq = 7>}
// CHECK-SAME:      -> tensor<1x3x8xf32>
func.func @context_parallel(%x: tensor<2x2x8xf32>, %d: tensor<2x2x4xi64>, %t: tensor<9x2xf32>, %y: tensor<1x3x8xf32>, %d3: tensor<1x3x7xi64>, %e: tensor<1x1x3x7xf32>) -> (tensor<2x2x8xf32>, tensor<1x3x8xf32>) {
  %b = gt.spatial_bias %d, %t : (tensor<2x2x4xi64>, tensor<9x2xf32>) -> tensor<2x2x2x4xf32>
  %o = gt.attention %x, %x, %x bias(%b) heads = 2 {gt.cp = #gt.cp<size = 2, mode = ring, grid = [1, 2, 1, 1], axes = 2>} : (tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x2x2x4xf32>) -> tensor<2x2x8xf32>
  %sb3 = gt.spatial_bias %d3, %t : (tensor<1x3x7xi64>, tensor<9x2xf32>) -> tensor<1x2x3x7xf32>
  %b3 = tosa.add %e, %sb3 : (tensor<1x1x3x7xf32>, tensor<1x2x3x7xf32>) -> tensor<1x2x3x7xf32>
  %o3 = gt.attention %y, %y, %y bias(%b3) heads = 2 {gt.cp = #gt.cp<size = 3, mode = allgather, grid = [1, 3, 1, 1], axes = 2, seq = 7>} : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x2x3x7xf32>) -> tensor<1x3x8xf32>
  return %o, %o3 : tensor<2x2x8xf32>, tensor<1x3x8xf32>
}

// -----

// A spatial bias that also feeds something other than attention is kept for
// it; the attention reads the table all the same.
// CHECK-LABEL: func.func @other_use
// CHECK:         %[[SB:.*]] = gt.spatial_bias
// CHECK:         gt.attention %{{.*}}, %{{.*}}, %{{.*}} spatial(
// CHECK:         return %{{.*}}, %[[SB]]
func.func @other_use(%x: tensor<2x4x8xf32>, %d: tensor<2x4x4xi64>, %t: tensor<9x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>) {
  %sb = gt.spatial_bias %d, %t : (tensor<2x4x4xi64>, tensor<9x2xf32>) -> tensor<2x2x4x4xf32>
  %o = gt.attention %x, %x, %x bias(%sb) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4x4xf32>) -> tensor<2x4x8xf32>
  return %o, %sb : tensor<2x4x8xf32>, tensor<2x2x4x4xf32>
}
