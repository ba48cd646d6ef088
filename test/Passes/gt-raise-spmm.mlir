// RUN: megagraph-opt %s --gt-raise --split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-raise --split-input-file \
// RUN:   | megagraph-opt --gt-raise --split-input-file | FileCheck %s

// Scatter-add message passing raised to gt.spmm (passes/Raise/
// GTRaiseSpmm.cpp), on inputs in the importer's form: the row scatter-add
// of ScatterElements / ScatterND with reduction add is a linalg.generic
// comparing each update's row with every output row. The second RUN line
// shows the pass is idempotent.

#map = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// out[dst[e]] += w[e] * h[src[e]] (GCN): the CSR of the destinations, the
// sources and weights permuted into CSR order, one SpMM over h; neither
// the scatter nor the E x C gather of h is left.
// CHECK-LABEL: func.func @weighted_gather
// CHECK-SAME:    (%[[H:[a-zA-Z0-9_]+]]: tensor<1x6x4xf32>, %[[SRC:[a-zA-Z0-9_]+]]: tensor<1x10xi32>, %[[DST:[a-zA-Z0-9_]+]]: tensor<1x10xi32>, %[[W:[a-zA-Z0-9_]+]]: tensor<10x1xf32>)
// CHECK:         %[[D64:.+]] = tosa.cast %{{.*}} : (tensor<10xi32>) -> tensor<10xi64>
// CHECK:         %[[RP:.+]], %[[CI:.+]], %[[P:.+]] = gt.csr_transpose %[[D64]] cols = 6 : (tensor<10xi64>) -> (tensor<7xi64>, tensor<10xi64>, tensor<10xi64>)
// CHECK:         %[[COL:.+]] = tosa.gather %{{.*}}, %{{.*}} : (tensor<1x10x1xi32>, tensor<1x10xi32>) -> tensor<1x10x1xi32>
// CHECK:         %[[VAL:.+]] = tosa.gather %{{.*}}, %{{.*}} : (tensor<1x10x1xf32>, tensor<1x10xi32>) -> tensor<1x10x1xf32>
// CHECK:         %[[Y:.+]] = gt.spmm %[[RP]], %{{.*}}, %{{.*}}, %{{.*}} : (tensor<7xi64>, tensor<10xi32>, tensor<10xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     tensor<1x10x4xf32>
// CHECK:         return
func.func @weighted_gather(%h: tensor<1x6x4xf32>, %src: tensor<1x10xi32>,
                           %dst: tensor<1x10xi32>, %w: tensor<10x1xf32>)
    -> tensor<1x6x4xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1x6x4xf32>}> : () -> tensor<1x6x4xf32>
  %s2 = tosa.const_shape {values = dense<[10, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s3 = tosa.const_shape {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %g = tosa.gather %h, %src : (tensor<1x6x4xf32>, tensor<1x10xi32>) -> tensor<1x10x4xf32>
  %g2 = tosa.reshape %g, %s2 : (tensor<1x10x4xf32>, !tosa.shape<2>) -> tensor<10x4xf32>
  %m = tosa.mul %g2, %w, %shift : (tensor<10x4xf32>, tensor<10x1xf32>, tensor<1xi8>) -> tensor<10x4xf32>
  %u = tosa.reshape %m, %s3 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
  %out = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%dst, %u : tensor<1x10xi32>, tensor<1x10x4xf32>) outs(%zero : tensor<1x6x4xf32>) {
  ^bb0(%in: i32, %in_0: f32, %acc: f32):
    %r = arith.index_cast %in : i32 to index
    %k = linalg.index 1 : index
    %eq = arith.cmpi eq, %r, %k : index
    %sum = arith.addf %acc, %in_0 : f32
    %sel = arith.select %eq, %sum, %acc : f32
    linalg.yield %sel : f32
  } -> tensor<1x6x4xf32>
  return %out : tensor<1x6x4xf32>
}

// -----

#map = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A scatter-add of plain updates (a degree count) into a non-zero tensor:
// the SpMM takes the updates themselves with unit weights, in CSR order
// (the col_idx of the transpose), and adds the initial value.
// CHECK-LABEL: func.func @plain_updates
// CHECK-SAME:    (%[[U:[a-zA-Z0-9_]+]]: tensor<1x10x1xf32>, %[[DST:[a-zA-Z0-9_]+]]: tensor<1x10xi32>, %[[INIT:[a-zA-Z0-9_]+]]: tensor<1x6x1xf32>)
// CHECK:         %[[ONES:.+]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<10xf32>}>
// CHECK:         %[[RP:.+]], %[[CI:.+]], %[[P:.+]] = gt.csr_transpose %{{.*}} cols = 6
// CHECK:         %[[X:.+]] = tosa.reshape %[[U]], %{{.*}} : (tensor<1x10x1xf32>, !tosa.shape<2>) -> tensor<10x1xf32>
// CHECK:         %[[Y:.+]] = gt.spmm %[[RP]], %[[CI]], %[[ONES]], %[[X]] : (tensor<7xi64>, tensor<10xi64>, tensor<10xf32>, tensor<10x1xf32>) -> tensor<6x1xf32>
// CHECK:         %[[Y3:.+]] = tosa.reshape %[[Y]]
// CHECK:         %[[S:.+]] = tosa.add %[[INIT]], %[[Y3]]
// CHECK:         return %[[S]]
func.func @plain_updates(%u: tensor<1x10x1xf32>, %dst: tensor<1x10xi32>,
                         %init: tensor<1x6x1xf32>) -> tensor<1x6x1xf32> {
  %out = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%dst, %u : tensor<1x10xi32>, tensor<1x10x1xf32>) outs(%init : tensor<1x6x1xf32>) {
  ^bb0(%in: i32, %in_0: f32, %acc: f32):
    %r = arith.index_cast %in : i32 to index
    %k = linalg.index 1 : index
    %eq = arith.cmpi eq, %r, %k : index
    %sum = arith.addf %acc, %in_0 : f32
    %sel = arith.select %eq, %sum, %acc : f32
    linalg.yield %sel : f32
  } -> tensor<1x6x1xf32>
  return %out : tensor<1x6x1xf32>
}

// -----

#map = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A scatter that overwrites (reduction none: select without the add) and
// one with a max reduction are not sums: they stay.
// CHECK-LABEL: func.func @not_a_sum
// CHECK-NOT:     gt.spmm
// CHECK:         linalg.generic
// CHECK:         arith.maximumf
// CHECK:         linalg.generic
// CHECK-NOT:     gt.spmm
func.func @not_a_sum(%u: tensor<1x10x1xf32>, %dst: tensor<1x10xi32>,
                     %init: tensor<1x6x1xf32>) -> (tensor<1x6x1xf32>, tensor<1x6x1xf32>) {
  %max = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%dst, %u : tensor<1x10xi32>, tensor<1x10x1xf32>) outs(%init : tensor<1x6x1xf32>) {
  ^bb0(%in: i32, %in_0: f32, %acc: f32):
    %r = arith.index_cast %in : i32 to index
    %k = linalg.index 1 : index
    %eq = arith.cmpi eq, %r, %k : index
    %m = arith.maximumf %acc, %in_0 : f32
    %sel = arith.select %eq, %m, %acc : f32
    linalg.yield %sel : f32
  } -> tensor<1x6x1xf32>
  %set = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%dst, %u : tensor<1x10xi32>, tensor<1x10x1xf32>) outs(%init : tensor<1x6x1xf32>) {
  ^bb0(%in: i32, %in_0: f32, %acc: f32):
    %r = arith.index_cast %in : i32 to index
    %k = linalg.index 1 : index
    %eq = arith.cmpi eq, %r, %k : index
    %sel = arith.select %eq, %in_0, %acc : f32
    linalg.yield %sel : f32
  } -> tensor<1x6x1xf32>
  return %max, %set : tensor<1x6x1xf32>, tensor<1x6x1xf32>
}
