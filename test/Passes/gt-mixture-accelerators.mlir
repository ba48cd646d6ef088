// RUN: megagraph-opt %s -split-input-file --gt-mixture-accelerators=chunks=3 | megagraph-opt -split-input-file | FileCheck %s
// The printed gt.spmm_linear parses back (the first RUN line); its
// bufferization calls the kernel with the operands in the C ABI's order.
// RUN: megagraph-opt %s -split-input-file --gt-mixture-accelerators=chunks=3 --canonicalize --one-shot-bufferize="allow-unknown-ops bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF

// GraphSAGE-mean's forward: the aggregation, scaled by 1 / degree, into a
// linear layer with a bias. The scaled rows are kept (the weight's gradient
// reads them).
// CHECK-LABEL: func.func @sage
// CHECK-SAME:    (%[[RP:.*]]: tensor<11xi64>, %[[CI:.*]]: tensor<30xi64>, %[[V:.*]]: tensor<30xf32>, %[[X:.*]]: tensor<10x4xf32>, %[[S:.*]]: tensor<10x1xf32>, %[[W:.*]]: tensor<4x6xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK:         %[[AGG:[^,]*]], %[[Y:[^ ]*]] = gt.spmm_linear %[[RP]], %[[CI]], %[[V]], %[[X]], %[[W]] scale(%[[S]]) bias(%[[B]]) chunks = 3 : {{.*}} -> (tensor<10x4xf32>, tensor<10x6xf32>)
// CHECK-NOT:     gt.spmm %
// CHECK-NOT:     gt.linear
// CHECK-NOT:     tosa.mul
// CHECK:         return %[[Y]], %[[AGG]]
// BUF-LABEL: func.func @sage
// BUF:         call @mgrt_moa_spmm_linear_f32({{.*}}) : (memref<?x?xf32>, memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, i64, i64) -> ()
func.func @sage(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                %x: tensor<10x4xf32>, %s: tensor<10x1xf32>, %w: tensor<4x6xf32>,
                %b: tensor<6xf32>) -> (tensor<10x6xf32>, tensor<10x4xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %a = gt.spmm %rp, %ci, %v, %x : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
  %m = tosa.mul %a, %s, %shift : (tensor<10x4xf32>, tensor<10x1xf32>, tensor<1xi8>) -> tensor<10x4xf32>
  %y = gt.linear %m, %w, %b : (tensor<10x4xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<10x6xf32>
  return %y, %m : tensor<10x6xf32>, tensor<10x4xf32>
}

// -----

// GCN's backward: dH = (A^T G) W^T as gt-autodiff writes it, a reshape to
// [1, N, D] into tosa.matmul by the [1, D, F] weight defined after the
// aggregation. The weight's reshape moves above the new op; the other
// reader of the aggregated rows (dW) gets the first result.
// CHECK-LABEL: func.func @gcn_backward
// CHECK-SAME:    %[[W:[^:]*]]: tensor<6x4xf32>
// CHECK:         %[[W3:.*]] = tosa.reshape %[[W]]
// CHECK:         %[[W2:.*]] = tosa.reshape %[[W3]]
// CHECK:         %[[AGG:[^,]*]], %[[Y:[^ ]*]] = gt.spmm_linear %{{.*}}, %[[W2]] chunks = 3 : {{.*}} -> (tensor<10x6xf32>, tensor<10x4xf32>)
// CHECK:         %[[DX:.*]] = tosa.reshape %[[Y]], {{.*}} -> tensor<1x10x4xf32>
// CHECK:         %[[A3:.*]] = tosa.reshape %[[AGG]], {{.*}} -> tensor<1x10x6xf32>
// CHECK:         tosa.matmul %{{.*}}, %[[A3]]
// CHECK-NOT:     gt.spmm %
// CHECK:         return %[[DX]]
func.func @gcn_backward(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                        %g: tensor<10x6xf32>, %h: tensor<1x4x10xf32>, %w: tensor<6x4xf32>)
    -> (tensor<1x10x4xf32>, tensor<1x4x6xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[1, 10, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %w3s = tosa.const_shape {values = dense<[1, 6, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = gt.spmm %rp, %ci, %v, %g : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x6xf32>) -> tensor<10x6xf32>
  %a3 = tosa.reshape %a, %s3 : (tensor<10x6xf32>, !tosa.shape<3>) -> tensor<1x10x6xf32>
  %w3 = tosa.reshape %w, %w3s : (tensor<6x4xf32>, !tosa.shape<3>) -> tensor<1x6x4xf32>
  %dx = tosa.matmul %a3, %w3, %zp, %zp : (tensor<1x10x6xf32>, tensor<1x6x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x4xf32>
  %dw = tosa.matmul %h, %a3, %zp, %zp : (tensor<1x4x10xf32>, tensor<1x10x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x6xf32>
  return %dx, %dw : tensor<1x10x4xf32>, tensor<1x4x6xf32>
}

// -----

// Left alone: a transform that reads the aggregation through a non-row-
// local op, and an aggregation of rows computed by a non-row-local op from
// a transform. One match keeps the pass from failing.
// CHECK-LABEL: func.func @left_alone
// CHECK:         gt.spmm %{{.*}} -> tensor<10x10xf32>
// CHECK:         tosa.transpose
// CHECK:         gt.linear
// CHECK:         gt.linear %{{.*}} -> tensor<10x6xf32>
// CHECK:         tosa.clamp
// CHECK:         gt.spmm %{{.*}} -> tensor<10x6xf32>
// CHECK:         gt.spmm_linear
// CHECK-NOT:     gt.linear_spmm
func.func @left_alone(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                      %x: tensor<10x4xf32>, %w: tensor<4x6xf32>, %sq: tensor<10x10xf32>,
                      %w10: tensor<10x3xf32>)
    -> (tensor<10x6xf32>, tensor<10x3xf32>, tensor<10x6xf32>) {
  %sqa = gt.spmm %rp, %ci, %v, %sq : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x10xf32>) -> tensor<10x10xf32>
  %t = tosa.transpose %sqa {perms = array<i32: 1, 0>} : (tensor<10x10xf32>) -> tensor<10x10xf32>
  %y = gt.linear %t, %w10 : (tensor<10x10xf32>, tensor<10x3xf32>) -> tensor<10x3xf32>
  %h = gt.linear %x, %w : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  %r = tosa.clamp %h {min_val = 0.0 : f32, max_val = 0x7F800000 : f32} : (tensor<10x6xf32>) -> tensor<10x6xf32>
  %a = gt.spmm %rp, %ci, %v, %r : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x6xf32>) -> tensor<10x6xf32>
  %b = gt.spmm %rp, %ci, %v, %x : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
  %z = gt.linear %b, %w : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  return %a, %y, %z : tensor<10x6xf32>, tensor<10x3xf32>, tensor<10x6xf32>
}

// -----

// A scatter into a zero base too large to fold (a tile of a zero constant,
// added through reshapes to [1, N, D] and back) before the scale: the zeros
// drop out with the rest of the chain.
// CHECK-LABEL: func.func @sage_unfolded_zeros
// CHECK:         %[[AGG:[^,]*]], %[[Y:[^ ]*]] = gt.spmm_linear %{{.*}} scale(%{{.*}}) chunks = 3
// CHECK-NOT:     tosa.add
// CHECK-NOT:     tosa.mul
// CHECK:         return %[[Y]]
func.func @sage_unfolded_zeros(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                               %x: tensor<10x4xf32>, %s: tensor<10x1xf32>, %w: tensor<4x6xf32>)
    -> tensor<10x6xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %m = tosa.const_shape {values = dense<[10, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s3 = tosa.const_shape {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %tile = tosa.tile %zero, %m : (tensor<1x1xf32>, !tosa.shape<2>) -> tensor<10x4xf32>
  %base = tosa.reshape %tile, %s3 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
  %a = gt.spmm %rp, %ci, %v, %x : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
  %a3 = tosa.reshape %a, %s3 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
  %sum = tosa.add %base, %a3 : (tensor<1x10x4xf32>, tensor<1x10x4xf32>) -> tensor<1x10x4xf32>
  %sum2 = tosa.reshape %sum, %m : (tensor<1x10x4xf32>, !tosa.shape<2>) -> tensor<10x4xf32>
  %scaled = tosa.mul %sum2, %s, %shift : (tensor<10x4xf32>, tensor<10x1xf32>, tensor<1xi8>) -> tensor<10x4xf32>
  %y = gt.linear %scaled, %w : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  return %y : tensor<10x6xf32>
}

// -----

// Added to something that is not zero: the sum is not the aggregation's
// rows, so only the aggregation would be pipelined, and it feeds no
// transform directly; the other function keeps the pass from failing.
// CHECK-LABEL: func.func @nonzero_base
// CHECK:         gt.spmm %
// CHECK:         tosa.add
// CHECK:         gt.linear
// CHECK:         gt.spmm_linear
func.func @nonzero_base(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                        %x: tensor<10x4xf32>, %b: tensor<10x4xf32>, %w: tensor<4x6xf32>)
    -> (tensor<10x6xf32>, tensor<10x6xf32>) {
  %a = gt.spmm %rp, %ci, %v, %x : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
  %sum = tosa.add %b, %a : (tensor<10x4xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
  %y = gt.linear %sum, %w : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  %c = gt.spmm %rp, %ci, %v, %x : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
  %z = gt.linear %c, %w : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  return %y, %z : tensor<10x6xf32>, tensor<10x6xf32>
}

// -----

// GCN's forward A (X W): the transform first. The aggregation becomes one
// gt.linear_spmm where it was; nothing of the sequential form is left.
// CHECK-LABEL: func.func @gcn_forward
// CHECK-SAME:    (%[[RP:.*]]: tensor<11xi64>, %[[CI:.*]]: tensor<30xi64>, %[[V:.*]]: tensor<30xf32>, %[[X:.*]]: tensor<10x4xf32>, %[[W:.*]]: tensor<4x6xf32>)
// CHECK:         %[[T:[^,]*]], %[[Y:[^ ]*]] = gt.linear_spmm %[[RP]], %[[CI]], %[[V]], %[[X]], %[[W]] chunks = 3 : {{.*}} -> (tensor<10x6xf32>, tensor<10x6xf32>)
// CHECK-NOT:     gt.linear %
// CHECK-NOT:     gt.spmm %
// CHECK:         return %[[Y]]
// BUF-LABEL: func.func @gcn_forward
// BUF:         call @mgrt_moa_linear_spmm_f32({{.*}}) : (memref<?x?xf32>, memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, i64, i64) -> ()
func.func @gcn_forward(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                       %x: tensor<10x4xf32>, %w: tensor<4x6xf32>) -> tensor<10x6xf32> {
  %h = gt.linear %x, %w : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  %a = gt.spmm %rp, %ci, %v, %h : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x6xf32>) -> tensor<10x6xf32>
  return %a : tensor<10x6xf32>
}

// -----

// The transform with a bias, then reshapes through [1, M, F] with zeros
// added and a row scale before the aggregation (an N x M aggregation, N !=
// M); the transformed rows have another reader after the aggregation,
// which gets the first result.
// CHECK-LABEL: func.func @transform_bias_scale
// CHECK-SAME:    %[[X:[^:]*]]: tensor<12x4xf32>, %[[W:[^:]*]]: tensor<4x6xf32>, %[[B:[^:]*]]: tensor<6xf32>, %[[S:[^:]*]]: tensor<12x1xf32>
// CHECK:         %[[T:[^,]*]], %[[Y:[^ ]*]] = gt.linear_spmm %{{.*}}, %{{.*}}, %{{.*}}, %[[X]], %[[W]] scale(%[[S]]) bias(%[[B]]) chunks = 3 : {{.*}} -> (tensor<12x6xf32>, tensor<10x6xf32>)
// CHECK-NOT:     tosa.mul
// CHECK-NOT:     tosa.add
// CHECK:         %[[E:.*]] = tosa.exp %[[T]]
// CHECK:         return %[[Y]], %[[E]]
func.func @transform_bias_scale(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                                %x: tensor<12x4xf32>, %w: tensor<4x6xf32>, %b: tensor<6xf32>,
                                %s: tensor<12x1xf32>) -> (tensor<10x6xf32>, tensor<12x6xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1x12x6xf32>}> : () -> tensor<1x12x6xf32>
  %s3 = tosa.const_shape {values = dense<[1, 12, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {values = dense<[12, 6]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %h = gt.linear %x, %w, %b : (tensor<12x4xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<12x6xf32>
  %h3 = tosa.reshape %h, %s3 : (tensor<12x6xf32>, !tosa.shape<3>) -> tensor<1x12x6xf32>
  %sum = tosa.add %zero, %h3 : (tensor<1x12x6xf32>, tensor<1x12x6xf32>) -> tensor<1x12x6xf32>
  %h2 = tosa.reshape %sum, %s2 : (tensor<1x12x6xf32>, !tosa.shape<2>) -> tensor<12x6xf32>
  %m = tosa.mul %s, %h2, %shift : (tensor<12x1xf32>, tensor<12x6xf32>, tensor<1xi8>) -> tensor<12x6xf32>
  %a = gt.spmm %rp, %ci, %v, %m : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<12x6xf32>) -> tensor<10x6xf32>
  %n = tosa.exp %m : (tensor<12x6xf32>) -> tensor<12x6xf32>
  return %a, %n : tensor<10x6xf32>, tensor<12x6xf32>
}

// -----

// GraphSAGE's backward A^T ((G W^T) / deg) as gt-autodiff writes it: the
// matmul of the reshaped gradient by the [1, F, D] transposed weight, back
// to [N, D], scaled, then aggregated. The new op reads the gradient's and
// the weight's [N, F] and [F, D] forms.
// CHECK-LABEL: func.func @sage_backward
// CHECK-SAME:    %[[G:[^:]*]]: tensor<10x6xf32>, %[[WT:[^:]*]]: tensor<6x4xf32>, %[[S:[^:]*]]: tensor<10x1xf32>
// CHECK:         %[[T:[^,]*]], %[[Y:[^ ]*]] = gt.linear_spmm %{{.*}}, %{{.*}}, %{{.*}}, %[[G]], %[[WT]] scale(%[[S]]) chunks = 3 : {{.*}} -> (tensor<10x4xf32>, tensor<10x4xf32>)
// CHECK-NOT:     tosa.matmul
// CHECK-NOT:     gt.spmm %
// CHECK:         return %[[Y]]
func.func @sage_backward(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                         %g: tensor<10x6xf32>, %wt: tensor<6x4xf32>, %s: tensor<10x1xf32>)
    -> tensor<10x4xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %g3s = tosa.const_shape {values = dense<[1, 10, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %w3s = tosa.const_shape {values = dense<[1, 6, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %d2s = tosa.const_shape {values = dense<[10, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %g3 = tosa.reshape %g, %g3s : (tensor<10x6xf32>, !tosa.shape<3>) -> tensor<1x10x6xf32>
  %w3 = tosa.reshape %wt, %w3s : (tensor<6x4xf32>, !tosa.shape<3>) -> tensor<1x6x4xf32>
  %dm3 = tosa.matmul %g3, %w3, %zp, %zp : (tensor<1x10x6xf32>, tensor<1x6x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x4xf32>
  %dm = tosa.reshape %dm3, %d2s : (tensor<1x10x4xf32>, !tosa.shape<2>) -> tensor<10x4xf32>
  %ds = tosa.mul %dm, %s, %shift : (tensor<10x4xf32>, tensor<10x1xf32>, tensor<1xi8>) -> tensor<10x4xf32>
  %dx = gt.spmm %rp, %ci, %v, %ds : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
  return %dx : tensor<10x4xf32>
}

// -----

// Both ways: A (X W1) W2. The aggregation goes with the transform after
// it (gt.spmm_linear); the transform before it stays.
// CHECK-LABEL: func.func @both_ways
// CHECK:         gt.linear %{{.*}} -> tensor<10x6xf32>
// CHECK:         gt.spmm_linear
// CHECK-NOT:     gt.linear_spmm
func.func @both_ways(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                     %x: tensor<10x4xf32>, %w1: tensor<4x6xf32>, %w2: tensor<6x3xf32>)
    -> tensor<10x3xf32> {
  %h = gt.linear %x, %w1 : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  %a = gt.spmm %rp, %ci, %v, %h : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x6xf32>) -> tensor<10x6xf32>
  %y = gt.linear %a, %w2 : (tensor<10x6xf32>, tensor<6x3xf32>) -> tensor<10x3xf32>
  return %y : tensor<10x3xf32>
}

// -----

// Transform first, left alone: a scale whose input has another reader
// (the chain's values must feed the chain only) and the transformed rows
// read before the aggregation. The last function keeps the pass from
// failing.
// CHECK-LABEL: func.func @transform_first_left_alone
// CHECK:         gt.linear
// CHECK:         tosa.mul
// CHECK:         gt.spmm %
// CHECK:         gt.linear
// CHECK:         tosa.exp
// CHECK:         gt.spmm %
// CHECK-NOT:     gt.linear_spmm
// CHECK-LABEL: func.func @keeps_pass_going
// CHECK:         gt.linear_spmm
func.func @transform_first_left_alone(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                                      %x: tensor<10x4xf32>, %w: tensor<4x6xf32>, %s: tensor<10x1xf32>)
    -> (tensor<10x6xf32>, tensor<10x6xf32>, tensor<10x6xf32>, tensor<10x6xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %h = gt.linear %x, %w : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  %m = tosa.mul %h, %s, %shift : (tensor<10x6xf32>, tensor<10x1xf32>, tensor<1xi8>) -> tensor<10x6xf32>
  %a = gt.spmm %rp, %ci, %v, %m : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x6xf32>) -> tensor<10x6xf32>
  %h2 = gt.linear %x, %w : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  %n = tosa.exp %h2 : (tensor<10x6xf32>) -> tensor<10x6xf32>
  %b = gt.spmm %rp, %ci, %v, %h2 : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x6xf32>) -> tensor<10x6xf32>
  return %a, %h, %b, %n : tensor<10x6xf32>, tensor<10x6xf32>, tensor<10x6xf32>, tensor<10x6xf32>
}

func.func @keeps_pass_going(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                            %x: tensor<10x4xf32>, %w: tensor<4x6xf32>) -> tensor<10x6xf32> {
  %h = gt.linear %x, %w : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
  %a = gt.spmm %rp, %ci, %v, %h : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x6xf32>) -> tensor<10x6xf32>
  return %a : tensor<10x6xf32>
}

// -----

// Partition parallelism (gt-partition-parallel, 2 parts of the 10 nodes):
// the aggregations are this rank's block of 5 rows over the whole graph's
// CSR (#gt.halo). Both orders keep the attribute and the block's types,
// and call the kernels that exchange the halo over the grid [2, 1, 1, 1]
// (axes 1).
// CHECK-LABEL: func.func @halo_sage
// CHECK:         %[[AGG:[^,]*]], %[[Y:[^ ]*]] = gt.spmm_linear %{{.*}} scale(%{{.*}}) bias(%{{.*}}) chunks = 3 {gt.halo = #gt.halo<parts = 2, nodes = 10>} : {{.*}} -> (tensor<5x4xf32>, tensor<5x6xf32>)
// CHECK-NOT:     gt.spmm %
// CHECK:         return %[[Y]], %[[AGG]]
// BUF-LABEL: func.func @halo_sage
// BUF:         %[[P:[^ ]*]] = arith.constant 2 : i64
// BUF:         call @mgrt_halo_moa_spmm_linear_f32({{.*}}, %[[P]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^)]*}}) : (memref<?x?xf32>, memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, i64, i64, i64, i64, i64, i64, i64) -> ()
func.func @halo_sage(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                     %x: tensor<5x4xf32>, %s: tensor<5x1xf32>, %w: tensor<4x6xf32>,
                     %b: tensor<6xf32>) -> (tensor<5x6xf32>, tensor<5x4xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %a = gt.spmm %rp, %ci, %v, %x {gt.halo = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  %m = tosa.mul %a, %s, %shift : (tensor<5x4xf32>, tensor<5x1xf32>, tensor<1xi8>) -> tensor<5x4xf32>
  %y = gt.linear %m, %w, %b : (tensor<5x4xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<5x6xf32>
  return %y, %m : tensor<5x6xf32>, tensor<5x4xf32>
}

// CHECK-LABEL: func.func @halo_gcn_forward
// CHECK:         %[[T:[^,]*]], %[[A:[^ ]*]] = gt.linear_spmm %{{.*}} chunks = 3 {gt.halo = #gt.halo<parts = 2, nodes = 10>} : {{.*}} -> (tensor<5x6xf32>, tensor<5x6xf32>)
// CHECK-NOT:     gt.spmm %
// CHECK-NOT:     gt.linear %
// CHECK:         return %[[A]], %[[T]]
// BUF-LABEL: func.func @halo_gcn_forward
// BUF:         call @mgrt_halo_moa_linear_spmm_f32({{.*}}) : (memref<?x?xf32>, memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, i64, i64, i64, i64, i64, i64, i64) -> ()
func.func @halo_gcn_forward(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                            %x: tensor<5x4xf32>, %w: tensor<4x6xf32>)
    -> (tensor<5x6xf32>, tensor<5x6xf32>) {
  %h = gt.linear %x, %w : (tensor<5x4xf32>, tensor<4x6xf32>) -> tensor<5x6xf32>
  %a = gt.spmm %rp, %ci, %v, %h {gt.halo = #gt.halo<parts = 2, nodes = 10>} : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<5x6xf32>) -> tensor<5x6xf32>
  return %a, %h : tensor<5x6xf32>, tensor<5x6xf32>
}

// -----

// Mixture of parallelism (gt-mixture-parallel, 2 ranks over the 10 nodes):
// the aggregation is feature-parallel (all 10 rows, 2 of the 4 columns) and
// an all-to-all switches the scaled rows to the rank's 5 rows of all 4
// columns before the transform. The aggregation-first op takes the switch
// in (gt.mop_switch; the scale stays [N, 1]); its kernel gets the grid.
// So does the transform-first op: GCN's forward transforms the block's 5
// rows and switches them to all 10 rows of 3 of the 6 columns.
shard.grid @gt_mop(shape = 2)
// CHECK-LABEL: func.func @mop_sage
// CHECK-SAME:    (%[[RP:.*]]: tensor<11xi64>, %[[CI:.*]]: tensor<30xi64>, %[[V:.*]]: tensor<30xf32>, %[[X:.*]]: tensor<10x2xf32>, %[[S:.*]]: tensor<10x1xf32>, %[[W:.*]]: tensor<4x6xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK:         %[[AGG:[^,]*]], %[[Y:[^ ]*]] = gt.spmm_linear %[[RP]], %[[CI]], %[[V]], %[[X]], %[[W]] scale(%[[S]]) bias(%[[B]]) chunks = 3 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : {{.*}} -> (tensor<5x4xf32>, tensor<5x6xf32>)
// CHECK-NOT:     shard.all_to_all
// CHECK-NOT:     gt.spmm %
// CHECK:         return %[[Y]], %[[AGG]]
// BUF-LABEL: func.func @mop_sage
// BUF:         %[[P:[^ ]*]] = arith.constant 2 : i64
// BUF:         call @mgrt_mop_moa_spmm_linear_f32({{.*}}, %[[P]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^)]*}}) : (memref<?x?xf32>, memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, i64, i64, i64, i64, i64, i64, i64) -> ()
func.func @mop_sage(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                    %x: tensor<10x2xf32>, %s: tensor<10x1xf32>, %w: tensor<4x6xf32>,
                    %b: tensor<6xf32>) -> (tensor<5x6xf32>, tensor<5x4xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %a = gt.spmm %rp, %ci, %v, %x : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x2xf32>) -> tensor<10x2xf32>
  %m = tosa.mul %a, %s, %shift : (tensor<10x2xf32>, tensor<10x1xf32>, tensor<1xi8>) -> tensor<10x2xf32>
  %r = shard.all_to_all %m on @gt_mop grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<10x2xf32> -> tensor<5x4xf32>
  %y = gt.linear %r, %w, %b : (tensor<5x4xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<5x6xf32>
  return %y, %r : tensor<5x6xf32>, tensor<5x4xf32>
}

// GraphSAGE's backward under mop: the switched rows scaled by 1 / deg
// ([N, 1], after the switch) before the aggregation; the op takes the
// scale of the 10 switched rows.
// CHECK-LABEL: func.func @mop_sage_backward
// CHECK-SAME:    %[[S:[^:]*]]: tensor<10x1xf32>
// CHECK:         %[[T:[^,]*]], %[[A:[^ ]*]] = gt.linear_spmm %{{.*}} scale(%[[S]]) chunks = 3 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : {{.*}} -> (tensor<5x6xf32>, tensor<10x3xf32>)
// CHECK-NOT:     shard.all_to_all
// CHECK-NOT:     tosa.mul
// CHECK:         return %[[A]]
func.func @mop_sage_backward(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                             %g: tensor<5x4xf32>, %w: tensor<4x6xf32>, %s: tensor<10x1xf32>) -> tensor<10x3xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %h = gt.linear %g, %w : (tensor<5x4xf32>, tensor<4x6xf32>) -> tensor<5x6xf32>
  %hc = shard.all_to_all %h on @gt_mop grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<5x6xf32> -> tensor<10x3xf32>
  %m = tosa.mul %hc, %s, %shift : (tensor<10x3xf32>, tensor<10x1xf32>, tensor<1xi8>) -> tensor<10x3xf32>
  %a = gt.spmm %rp, %ci, %v, %m : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x3xf32>) -> tensor<10x3xf32>
  return %a : tensor<10x3xf32>
}

// CHECK-LABEL: func.func @mop_gcn_forward
// CHECK-SAME:    (%[[RP:.*]]: tensor<11xi64>, %[[CI:.*]]: tensor<30xi64>, %[[V:.*]]: tensor<30xf32>, %[[X:.*]]: tensor<5x4xf32>, %[[W:.*]]: tensor<4x6xf32>)
// CHECK:         %[[T:[^,]*]], %[[A:[^ ]*]] = gt.linear_spmm %[[RP]], %[[CI]], %[[V]], %[[X]], %[[W]] chunks = 3 {gt.mop_switch = #gt.halo<parts = 2, nodes = 10>} : {{.*}} -> (tensor<5x6xf32>, tensor<10x3xf32>)
// CHECK-NOT:     shard.all_to_all
// CHECK-NOT:     gt.spmm %
// CHECK:         return %[[A]]
// BUF-LABEL: func.func @mop_gcn_forward
// BUF:         %[[P:[^ ]*]] = arith.constant 2 : i64
// BUF:         call @mgrt_mop_moa_linear_spmm_f32({{.*}}, %[[P]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^)]*}}) : (memref<?x?xf32>, memref<?x?xf32>, memref<?xi64>, memref<?xi64>, memref<?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>, i64, i64, i64, i64, i64, i64, i64) -> ()
func.func @mop_gcn_forward(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                           %x: tensor<5x4xf32>, %w: tensor<4x6xf32>) -> tensor<10x3xf32> {
  %h = gt.linear %x, %w : (tensor<5x4xf32>, tensor<4x6xf32>) -> tensor<5x6xf32>
  %hc = shard.all_to_all %h on @gt_mop grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<5x6xf32> -> tensor<10x3xf32>
  %a = gt.spmm %rp, %ci, %v, %hc : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x3xf32>) -> tensor<10x3xf32>
  return %a : tensor<10x3xf32>
}

// -----

// Left alone under mop: a transform whose rows are padded before the
// switch (3 classes over 2 ranks), and a switched aggregation read
// elsewhere too. The last function keeps the pass from failing.
shard.grid @gt_mop(shape = 2)
// CHECK-LABEL: func.func @mop_left_alone
// CHECK:         tosa.pad
// CHECK:         shard.all_to_all
// CHECK:         gt.spmm %
// CHECK:         shard.all_to_all
// CHECK:         gt.linear %
// CHECK-NOT:     gt.spmm_linear
// CHECK-NOT:     gt.linear_spmm
// CHECK-LABEL: func.func @mop_keeps_pass_going
// CHECK:         gt.spmm_linear
func.func @mop_left_alone(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                          %x: tensor<5x4xf32>, %w: tensor<4x3xf32>,
                          %xc: tensor<10x2xf32>, %w2: tensor<4x6xf32>)
    -> (tensor<10x2xf32>, tensor<5x6xf32>, tensor<10x2xf32>) {
  %h = gt.linear %x, %w : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  %pads = tosa.const_shape {values = dense<[0, 0, 0, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %p = tosa.pad %h, %pads, %zero : (tensor<5x3xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<5x4xf32>
  %hc = shard.all_to_all %p on @gt_mop grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<5x4xf32> -> tensor<10x2xf32>
  %a = gt.spmm %rp, %ci, %v, %hc : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x2xf32>) -> tensor<10x2xf32>
  %b = gt.spmm %rp, %ci, %v, %xc : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x2xf32>) -> tensor<10x2xf32>
  %r = shard.all_to_all %b on @gt_mop grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<10x2xf32> -> tensor<5x4xf32>
  %y = gt.linear %r, %w2 : (tensor<5x4xf32>, tensor<4x6xf32>) -> tensor<5x6xf32>
  return %a, %y, %b : tensor<10x2xf32>, tensor<5x6xf32>, tensor<10x2xf32>
}

func.func @mop_keeps_pass_going(%rp: tensor<11xi64>, %ci: tensor<30xi64>, %v: tensor<30xf32>,
                                %xc: tensor<10x2xf32>, %w: tensor<4x6xf32>) -> tensor<5x6xf32> {
  %a = gt.spmm %rp, %ci, %v, %xc : (tensor<11xi64>, tensor<30xi64>, tensor<30xf32>, tensor<10x2xf32>) -> tensor<10x2xf32>
  %r = shard.all_to_all %a on @gt_mop grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<10x2xf32> -> tensor<5x4xf32>
  %y = gt.linear %r, %w : (tensor<5x4xf32>, tensor<4x6xf32>) -> tensor<5x6xf32>
  return %y : tensor<5x6xf32>
}
