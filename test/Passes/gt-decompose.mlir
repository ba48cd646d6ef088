// RUN: megagraph-opt %s --gt-decompose -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-decompose=keep-attention=false -split-input-file \
// RUN:   | FileCheck %s --check-prefix=REF
// RUN: megagraph-opt %s --gt-decompose -split-input-file \
// RUN:   | megagraph-opt --gt-decompose -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-decompose=keep-attention=false -split-input-file \
// RUN:   | megagraph-opt --gt-decompose=keep-attention=false -split-input-file \
// RUN:   | FileCheck %s --check-prefix=REF

// Tests of the gt-decompose pass (passes/Lower/GTDecompose.cpp): every gt op
// with a CPU lowering is rewritten into TOSA (static shapes), and
// linalg.softmax into its linalg.generic decomposition. gt.attention stays by
// default (it bufferizes into the fused runtime kernel, CHECK); with
// keep-attention=false it becomes explicit scores, softmax and products (the
// reference path, REF). The last two RUN lines run the pass on its own
// output: it is idempotent.
//
// Constants are hoisted to the top of the function by the rewrite driver, so
// they are matched with CHECK-DAG. Operands whose creation order depends on
// the C++ compiler's argument evaluation order are matched with CHECK-DAG too.

//===----------------------------------------------------------------------===//
// gt.gelu
//===----------------------------------------------------------------------===//

// x * (1 + erf(x * 1/sqrt(2))) * 0.5.
// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x8xf32>)
// CHECK-DAG:     %[[HALF:.+]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1xf32>}>
// CHECK-DAG:     %[[ONE:.+]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK-DAG:     %[[C:.+]] = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}>
// CHECK-DAG:     %[[SH:.+]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// CHECK:         %[[S:.+]] = tosa.mul %[[X]], %[[C]], %[[SH]] : (tensor<2x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[E:.+]] = tosa.erf %[[S]] : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[P:.+]] = tosa.add %[[E]], %[[ONE]] : (tensor<2x8xf32>, tensor<1x1xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[M:.+]] = tosa.mul %[[X]], %[[P]], %[[SH]] : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<1xi8>) -> tensor<2x8xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.mul %[[M]], %[[HALF]], %[[SH]] : (tensor<2x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<2x8xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x8xf32>
func.func @gelu_erf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = gt.gelu %x : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), on a rank-3 input.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3x8xf32>)
// CHECK-DAG:     %[[HALF:.+]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1x1xf32>}>
// CHECK-DAG:     %[[ONE:.+]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1x1xf32>}>
// CHECK-DAG:     %[[K:.+]] = "tosa.const"() <{values = dense<0.797884583> : tensor<1x1x1xf32>}>
// CHECK-DAG:     %[[A:.+]] = "tosa.const"() <{values = dense<4.471500e-02> : tensor<1x1x1xf32>}>
// CHECK-DAG:     %[[SH:.+]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// CHECK:         %[[X2:.+]] = tosa.mul %[[X]], %[[X]], %[[SH]] : (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<1xi8>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    %[[X3:.+]] = tosa.mul %[[X2]], %[[X]], %[[SH]] :
// CHECK-NEXT:    %[[AX3:.+]] = tosa.mul %[[X3]], %[[A]], %[[SH]] : (tensor<2x3x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    %[[POLY:.+]] = tosa.add %[[X]], %[[AX3]] : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    %[[IN:.+]] = tosa.mul %[[POLY]], %[[K]], %[[SH]] :
// CHECK-NEXT:    %[[T:.+]] = tosa.tanh %[[IN]] : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    %[[P:.+]] = tosa.add %[[T]], %[[ONE]] :
// CHECK-NEXT:    %[[M:.+]] = tosa.mul %[[X]], %[[P]], %[[SH]] :
// CHECK-NEXT:    %[[R:.+]] = tosa.mul %[[M]], %[[HALF]], %[[SH]] :
// CHECK-NEXT:    return %[[R]] : tensor<2x3x8xf32>
func.func @gelu_tanh(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %0 = gt.gelu %x {tanh} : tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

//===----------------------------------------------------------------------===//
// gt.linear
//===----------------------------------------------------------------------===//

// -----

// Rank-2 input, no bias: [6, 16] x [16, 32] as a 1x6x16 x 1x16x32 matmul.
// CHECK-LABEL: func.func @linear_rank2
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<6x16xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<16x32xf32>)
// CHECK-DAG:     %[[OUT:.+]] = tosa.const_shape {values = dense<[6, 32]> : tensor<2xindex>}
// CHECK-DAG:     %[[ZP:.+]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}>
// CHECK-DAG:     %[[XS:.+]] = tosa.const_shape {values = dense<[1, 6, 16]> : tensor<3xindex>}
// CHECK-DAG:     %[[WS:.+]] = tosa.const_shape {values = dense<[1, 16, 32]> : tensor<3xindex>}
// CHECK-DAG:     %[[W3:.+]] = tosa.reshape %[[W]], %[[WS]] : (tensor<16x32xf32>, !tosa.shape<3>) -> tensor<1x16x32xf32>
// CHECK-DAG:     %[[X3:.+]] = tosa.reshape %[[X]], %[[XS]] : (tensor<6x16xf32>, !tosa.shape<3>) -> tensor<1x6x16xf32>
// CHECK:         %[[MM:.+]] = tosa.matmul %[[X3]], %[[W3]], %[[ZP]], %[[ZP]] : (tensor<1x6x16xf32>, tensor<1x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x32xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.reshape %[[MM]], %[[OUT]] : (tensor<1x6x32xf32>, !tosa.shape<2>) -> tensor<6x32xf32>
// CHECK-NEXT:    return %[[R]] : tensor<6x32xf32>
func.func @linear_rank2(%x: tensor<6x16xf32>, %w: tensor<16x32xf32>) -> tensor<6x32xf32> {
  %0 = gt.linear %x, %w : (tensor<6x16xf32>, tensor<16x32xf32>) -> tensor<6x32xf32>
  return %0 : tensor<6x32xf32>
}

// -----

// Rank-3 input with bias: the leading dimensions fold into the matmul rows
// (2 * 6 = 12); the bias is reshaped to 1x1xN and added.
// CHECK-LABEL: func.func @linear_rank3_bias
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x6x16xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<16x32xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<32xf32>)
// CHECK-DAG:     %[[BS:.+]] = tosa.const_shape {values = dense<[1, 1, 32]> : tensor<3xindex>}
// CHECK-DAG:     %[[OUT:.+]] = tosa.const_shape {values = dense<[2, 6, 32]> : tensor<3xindex>}
// CHECK-DAG:     %[[ZP:.+]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}>
// CHECK-DAG:     %[[XS:.+]] = tosa.const_shape {values = dense<[1, 12, 16]> : tensor<3xindex>}
// CHECK-DAG:     %[[WS:.+]] = tosa.const_shape {values = dense<[1, 16, 32]> : tensor<3xindex>}
// CHECK-DAG:     %[[W3:.+]] = tosa.reshape %[[W]], %[[WS]] : (tensor<16x32xf32>, !tosa.shape<3>) -> tensor<1x16x32xf32>
// CHECK-DAG:     %[[X3:.+]] = tosa.reshape %[[X]], %[[XS]] : (tensor<2x6x16xf32>, !tosa.shape<3>) -> tensor<1x12x16xf32>
// CHECK:         %[[MM:.+]] = tosa.matmul %[[X3]], %[[W3]], %[[ZP]], %[[ZP]] : (tensor<1x12x16xf32>, tensor<1x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x12x32xf32>
// CHECK-NEXT:    %[[Y:.+]] = tosa.reshape %[[MM]], %[[OUT]] : (tensor<1x12x32xf32>, !tosa.shape<3>) -> tensor<2x6x32xf32>
// CHECK-NEXT:    %[[B3:.+]] = tosa.reshape %[[B]], %[[BS]] : (tensor<32xf32>, !tosa.shape<3>) -> tensor<1x1x32xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.add %[[Y]], %[[B3]] : (tensor<2x6x32xf32>, tensor<1x1x32xf32>) -> tensor<2x6x32xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x6x32xf32>
func.func @linear_rank3_bias(%x: tensor<2x6x16xf32>, %w: tensor<16x32xf32>,
                             %b: tensor<32xf32>) -> tensor<2x6x32xf32> {
  %0 = gt.linear %x, %w, %b : (tensor<2x6x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x6x32xf32>
  return %0 : tensor<2x6x32xf32>
}

//===----------------------------------------------------------------------===//
// gt.layer_norm
//===----------------------------------------------------------------------===//

// -----

// 1-D scale and bias: reduce over axis 2 only, mean factor 1/16.
// CHECK-LABEL: func.func @layer_norm_bias
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x6x16xf32>, %[[G:[a-zA-Z0-9_]+]]: tensor<16xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<16xf32>)
// CHECK-DAG:     %[[PS:.+]] = tosa.const_shape {values = dense<[1, 1, 16]> : tensor<3xindex>}
// CHECK-DAG:     %[[EPS:.+]] = "tosa.const"() <{values = dense<9.99999974E-6> : tensor<1x1x1xf32>}>
// CHECK-DAG:     %[[SH:.+]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// CHECK-DAG:     %[[INV:.+]] = "tosa.const"() <{values = dense<6.250000e-02> : tensor<1x1x1xf32>}>
// CHECK:         %[[S1:.+]] = tosa.reduce_sum %[[X]] {axis = 2 : i32} : (tensor<2x6x16xf32>) -> tensor<2x6x1xf32>
// CHECK-NEXT:    %[[MEAN:.+]] = tosa.mul %[[S1]], %[[INV]], %[[SH]] : (tensor<2x6x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x6x1xf32>
// CHECK-NEXT:    %[[CEN:.+]] = tosa.sub %[[X]], %[[MEAN]] : (tensor<2x6x16xf32>, tensor<2x6x1xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    %[[SQ:.+]] = tosa.mul %[[CEN]], %[[CEN]], %[[SH]] : (tensor<2x6x16xf32>, tensor<2x6x16xf32>, tensor<1xi8>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    %[[S2:.+]] = tosa.reduce_sum %[[SQ]] {axis = 2 : i32} : (tensor<2x6x16xf32>) -> tensor<2x6x1xf32>
// CHECK-NEXT:    %[[VAR:.+]] = tosa.mul %[[S2]], %[[INV]], %[[SH]] :
// CHECK-NEXT:    %[[VE:.+]] = tosa.add %[[VAR]], %[[EPS]] : (tensor<2x6x1xf32>, tensor<1x1x1xf32>) -> tensor<2x6x1xf32>
// CHECK-NEXT:    %[[RS:.+]] = tosa.rsqrt %[[VE]] : (tensor<2x6x1xf32>) -> tensor<2x6x1xf32>
// CHECK-DAG:     %[[G3:.+]] = tosa.reshape %[[G]], %[[PS]] : (tensor<16xf32>, !tosa.shape<3>) -> tensor<1x1x16xf32>
// CHECK-DAG:     %[[NORM:.+]] = tosa.mul %[[CEN]], %[[RS]], %[[SH]] : (tensor<2x6x16xf32>, tensor<2x6x1xf32>, tensor<1xi8>) -> tensor<2x6x16xf32>
// CHECK:         %[[SC:.+]] = tosa.mul %[[NORM]], %[[G3]], %[[SH]] : (tensor<2x6x16xf32>, tensor<1x1x16xf32>, tensor<1xi8>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    %[[B3:.+]] = tosa.reshape %[[B]], %[[PS]] : (tensor<16xf32>, !tosa.shape<3>) -> tensor<1x1x16xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.add %[[SC]], %[[B3]] : (tensor<2x6x16xf32>, tensor<1x1x16xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x6x16xf32>
func.func @layer_norm_bias(%x: tensor<2x6x16xf32>, %g: tensor<16xf32>,
                           %b: tensor<16xf32>) -> tensor<2x6x16xf32> {
  %0 = gt.layer_norm %x, %g, %b epsilon = 1.0e-05 : (tensor<2x6x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x6x16xf32>
  return %0 : tensor<2x6x16xf32>
}

// -----

// 2-D scale, no bias: reduce over axes 1 then 2, mean factor 1/96; the scale
// is reshaped to 1x6x16 and there is no final add.
// CHECK-LABEL: func.func @layer_norm_2d_scale
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x6x16xf32>, %[[G:[a-zA-Z0-9_]+]]: tensor<6x16xf32>)
// CHECK-DAG:     %[[PS:.+]] = tosa.const_shape {values = dense<[1, 6, 16]> : tensor<3xindex>}
// CHECK-DAG:     %[[EPS:.+]] = "tosa.const"() <{values = dense<1.000000e-03> : tensor<1x1x1xf32>}>
// CHECK-DAG:     %[[SH:.+]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// CHECK-DAG:     %[[INV:.+]] = "tosa.const"() <{values = dense<0.010416667> : tensor<1x1x1xf32>}>
// CHECK:         %[[S1A:.+]] = tosa.reduce_sum %[[X]] {axis = 1 : i32} : (tensor<2x6x16xf32>) -> tensor<2x1x16xf32>
// CHECK-NEXT:    %[[S1B:.+]] = tosa.reduce_sum %[[S1A]] {axis = 2 : i32} : (tensor<2x1x16xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[MEAN:.+]] = tosa.mul %[[S1B]], %[[INV]], %[[SH]] : (tensor<2x1x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[CEN:.+]] = tosa.sub %[[X]], %[[MEAN]] : (tensor<2x6x16xf32>, tensor<2x1x1xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    %[[SQ:.+]] = tosa.mul %[[CEN]], %[[CEN]], %[[SH]] :
// CHECK-NEXT:    %[[S2A:.+]] = tosa.reduce_sum %[[SQ]] {axis = 1 : i32} : (tensor<2x6x16xf32>) -> tensor<2x1x16xf32>
// CHECK-NEXT:    %[[S2B:.+]] = tosa.reduce_sum %[[S2A]] {axis = 2 : i32} : (tensor<2x1x16xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[VAR:.+]] = tosa.mul %[[S2B]], %[[INV]], %[[SH]] :
// CHECK-NEXT:    %[[VE:.+]] = tosa.add %[[VAR]], %[[EPS]] : (tensor<2x1x1xf32>, tensor<1x1x1xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[RS:.+]] = tosa.rsqrt %[[VE]] : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
// CHECK-DAG:     %[[G3:.+]] = tosa.reshape %[[G]], %[[PS]] : (tensor<6x16xf32>, !tosa.shape<3>) -> tensor<1x6x16xf32>
// CHECK-DAG:     %[[NORM:.+]] = tosa.mul %[[CEN]], %[[RS]], %[[SH]] : (tensor<2x6x16xf32>, tensor<2x1x1xf32>, tensor<1xi8>) -> tensor<2x6x16xf32>
// CHECK:         %[[R:.+]] = tosa.mul %[[NORM]], %[[G3]], %[[SH]] : (tensor<2x6x16xf32>, tensor<1x6x16xf32>, tensor<1xi8>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x6x16xf32>
func.func @layer_norm_2d_scale(%x: tensor<2x6x16xf32>, %g: tensor<6x16xf32>) -> tensor<2x6x16xf32> {
  %0 = gt.layer_norm %x, %g epsilon = 1.0e-03 : (tensor<2x6x16xf32>, tensor<6x16xf32>) -> tensor<2x6x16xf32>
  return %0 : tensor<2x6x16xf32>
}

//===----------------------------------------------------------------------===//
// gt.node_embedding
//===----------------------------------------------------------------------===//

// -----

// i64 ids clamped into [0, V - 1 = 9], cast to i32, flattened to 1x20 and
// gathered from the 1x10x8 table; the result is ids.shape + [D].
// CHECK-LABEL: func.func @node_embedding
// CHECK-SAME:    (%[[IDS:[a-zA-Z0-9_]+]]: tensor<4x5xi64>, %[[T:[a-zA-Z0-9_]+]]: tensor<10x8xf32>)
// CHECK-DAG:     %[[OUT:.+]] = tosa.const_shape {values = dense<[4, 5, 8]> : tensor<3xindex>}
// CHECK-DAG:     %[[TS:.+]] = tosa.const_shape {values = dense<[1, 10, 8]> : tensor<3xindex>}
// CHECK-DAG:     %[[IS:.+]] = tosa.const_shape {values = dense<[1, 20]> : tensor<2xindex>}
// CHECK-DAG:     %[[LO:.+]] = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}>
// CHECK-DAG:     %[[HI:.+]] = "tosa.const"() <{values = dense<9> : tensor<1x1xi64>}>
// CHECK:         %[[C1:.+]] = tosa.maximum %[[IDS]], %[[LO]] : (tensor<4x5xi64>, tensor<1x1xi64>) -> tensor<4x5xi64>
// CHECK-NEXT:    %[[C2:.+]] = tosa.minimum %[[C1]], %[[HI]] : (tensor<4x5xi64>, tensor<1x1xi64>) -> tensor<4x5xi64>
// CHECK-NEXT:    %[[I32:.+]] = tosa.cast %[[C2]] : (tensor<4x5xi64>) -> tensor<4x5xi32>
// CHECK-NEXT:    %[[IDX:.+]] = tosa.reshape %[[I32]], %[[IS]] : (tensor<4x5xi32>, !tosa.shape<2>) -> tensor<1x20xi32>
// CHECK-NEXT:    %[[TAB:.+]] = tosa.reshape %[[T]], %[[TS]] : (tensor<10x8xf32>, !tosa.shape<3>) -> tensor<1x10x8xf32>
// CHECK-NEXT:    %[[GA:.+]] = tosa.gather %[[TAB]], %[[IDX]] : (tensor<1x10x8xf32>, tensor<1x20xi32>) -> tensor<1x20x8xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.reshape %[[GA]], %[[OUT]] : (tensor<1x20x8xf32>, !tosa.shape<3>) -> tensor<4x5x8xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x5x8xf32>
func.func @node_embedding(%ids: tensor<4x5xi64>, %t: tensor<10x8xf32>) -> tensor<4x5x8xf32> {
  %0 = gt.node_embedding %ids, %t : (tensor<4x5xi64>, tensor<10x8xf32>) -> tensor<4x5x8xf32>
  return %0 : tensor<4x5x8xf32>
}

// -----

// sum_features: gather to 4x3x8, sum over the feature axis 1, reshape to 4x8.
// CHECK-LABEL: func.func @node_embedding_sum_features
// CHECK-SAME:    (%[[IDS:[a-zA-Z0-9_]+]]: tensor<4x3xi64>, %[[T:[a-zA-Z0-9_]+]]: tensor<10x8xf32>)
// CHECK-DAG:     %[[OUT:.+]] = tosa.const_shape {values = dense<[4, 8]> : tensor<2xindex>}
// CHECK-DAG:     %[[GS:.+]] = tosa.const_shape {values = dense<[4, 3, 8]> : tensor<3xindex>}
// CHECK-DAG:     %[[TS:.+]] = tosa.const_shape {values = dense<[1, 10, 8]> : tensor<3xindex>}
// CHECK-DAG:     %[[IS:.+]] = tosa.const_shape {values = dense<[1, 12]> : tensor<2xindex>}
// CHECK-DAG:     %[[LO:.+]] = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}>
// CHECK-DAG:     %[[HI:.+]] = "tosa.const"() <{values = dense<9> : tensor<1x1xi64>}>
// CHECK:         %[[C1:.+]] = tosa.maximum %[[IDS]], %[[LO]] : (tensor<4x3xi64>, tensor<1x1xi64>) -> tensor<4x3xi64>
// CHECK-NEXT:    %[[C2:.+]] = tosa.minimum %[[C1]], %[[HI]] : (tensor<4x3xi64>, tensor<1x1xi64>) -> tensor<4x3xi64>
// CHECK-NEXT:    %[[I32:.+]] = tosa.cast %[[C2]] : (tensor<4x3xi64>) -> tensor<4x3xi32>
// CHECK-NEXT:    %[[IDX:.+]] = tosa.reshape %[[I32]], %[[IS]] : (tensor<4x3xi32>, !tosa.shape<2>) -> tensor<1x12xi32>
// CHECK-NEXT:    %[[TAB:.+]] = tosa.reshape %[[T]], %[[TS]] : (tensor<10x8xf32>, !tosa.shape<3>) -> tensor<1x10x8xf32>
// CHECK-NEXT:    %[[GA:.+]] = tosa.gather %[[TAB]], %[[IDX]] : (tensor<1x10x8xf32>, tensor<1x12xi32>) -> tensor<1x12x8xf32>
// CHECK-NEXT:    %[[G3:.+]] = tosa.reshape %[[GA]], %[[GS]] : (tensor<1x12x8xf32>, !tosa.shape<3>) -> tensor<4x3x8xf32>
// CHECK-NEXT:    %[[SUM:.+]] = tosa.reduce_sum %[[G3]] {axis = 1 : i32} : (tensor<4x3x8xf32>) -> tensor<4x1x8xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.reshape %[[SUM]], %[[OUT]] : (tensor<4x1x8xf32>, !tosa.shape<2>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x8xf32>
func.func @node_embedding_sum_features(%ids: tensor<4x3xi64>, %t: tensor<10x8xf32>) -> tensor<4x8xf32> {
  %0 = gt.node_embedding %ids, %t {sum_features} : (tensor<4x3xi64>, tensor<10x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// gt.degree_embedding
//===----------------------------------------------------------------------===//

// -----

// Degrees clamped into [0, 5], gathered to 2x4x8 and added to the input.
// CHECK-LABEL: func.func @degree_embedding
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>, %[[D:[a-zA-Z0-9_]+]]: tensor<2x4xi64>, %[[T:[a-zA-Z0-9_]+]]: tensor<6x8xf32>)
// CHECK-DAG:     %[[OUT:.+]] = tosa.const_shape {values = dense<[2, 4, 8]> : tensor<3xindex>}
// CHECK-DAG:     %[[TS:.+]] = tosa.const_shape {values = dense<[1, 6, 8]> : tensor<3xindex>}
// CHECK-DAG:     %[[IS:.+]] = tosa.const_shape {values = dense<[1, 8]> : tensor<2xindex>}
// CHECK-DAG:     %[[LO:.+]] = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}>
// CHECK-DAG:     %[[HI:.+]] = "tosa.const"() <{values = dense<5> : tensor<1x1xi64>}>
// CHECK:         %[[C1:.+]] = tosa.maximum %[[D]], %[[LO]] : (tensor<2x4xi64>, tensor<1x1xi64>) -> tensor<2x4xi64>
// CHECK-NEXT:    %[[C2:.+]] = tosa.minimum %[[C1]], %[[HI]] : (tensor<2x4xi64>, tensor<1x1xi64>) -> tensor<2x4xi64>
// CHECK-NEXT:    %[[I32:.+]] = tosa.cast %[[C2]] : (tensor<2x4xi64>) -> tensor<2x4xi32>
// CHECK-NEXT:    %[[IDX:.+]] = tosa.reshape %[[I32]], %[[IS]] : (tensor<2x4xi32>, !tosa.shape<2>) -> tensor<1x8xi32>
// CHECK-NEXT:    %[[TAB:.+]] = tosa.reshape %[[T]], %[[TS]] : (tensor<6x8xf32>, !tosa.shape<3>) -> tensor<1x6x8xf32>
// CHECK-NEXT:    %[[GA:.+]] = tosa.gather %[[TAB]], %[[IDX]] : (tensor<1x6x8xf32>, tensor<1x8xi32>) -> tensor<1x8x8xf32>
// CHECK-NEXT:    %[[E:.+]] = tosa.reshape %[[GA]], %[[OUT]] : (tensor<1x8x8xf32>, !tosa.shape<3>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.add %[[X]], %[[E]] : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x4x8xf32>
func.func @degree_embedding(%x: tensor<2x4x8xf32>, %d: tensor<2x4xi64>,
                            %t: tensor<6x8xf32>) -> tensor<2x4x8xf32> {
  %0 = gt.degree_embedding %x, %d, %t : (tensor<2x4x8xf32>, tensor<2x4xi64>, tensor<6x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

//===----------------------------------------------------------------------===//
// gt.spatial_bias
//===----------------------------------------------------------------------===//

// -----

// Rank-2 distance [Sq=4, Sk=5], table [M=7, H=3]: one fused loop nest writes
// [H, Sq, Sk] directly from the clamped distances (no gather + transpose).
// CHECK-LABEL: func.func @spatial_bias_rank2
// CHECK-SAME:    (%[[D:[a-zA-Z0-9_]+]]: tensor<4x5xi64>, %[[T:[a-zA-Z0-9_]+]]: tensor<7x3xf32>)
// CHECK-DAG:     %[[HI:.+]] = arith.constant 6 : i64
// CHECK-DAG:     %[[LO:.+]] = arith.constant 0 : i64
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<3x4x5xf32>
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[D]] : tensor<4x5xi64>) outs(%[[E]] : tensor<3x4x5xf32>)
// CHECK:           %[[C1:.+]] = arith.maxsi %{{.*}}, %[[LO]] : i64
// CHECK-NEXT:      %[[C2:.+]] = arith.minsi %[[C1]], %[[HI]] : i64
// CHECK-NEXT:      %[[ROW:.+]] = arith.index_cast %[[C2]] : i64 to index
// CHECK-NEXT:      %[[H:.+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[V:.+]] = tensor.extract %[[T]][%[[ROW]], %[[H]]] : tensor<7x3xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         return %[[R]] : tensor<3x4x5xf32>
// CHECK-NOT:     tosa.transpose
func.func @spatial_bias_rank2(%d: tensor<4x5xi64>, %t: tensor<7x3xf32>) -> tensor<3x4x5xf32> {
  %0 = gt.spatial_bias %d, %t : (tensor<4x5xi64>, tensor<7x3xf32>) -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}

// -----

// Rank-3 i32 distance [B=2, Sq=4, Sk=5]: the head index is loop dim 1 of
// the [B, H, Sq, Sk] result.
// CHECK-LABEL: func.func @spatial_bias_rank3
// CHECK-SAME:    (%[[D:[a-zA-Z0-9_]+]]: tensor<2x4x5xi32>, %[[T:[a-zA-Z0-9_]+]]: tensor<7x3xf32>)
// CHECK-DAG:     %[[HI:.+]] = arith.constant 6 : i32
// CHECK-DAG:     %[[LO:.+]] = arith.constant 0 : i32
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<2x3x4x5xf32>
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[D]] : tensor<2x4x5xi32>) outs(%[[E]] : tensor<2x3x4x5xf32>)
// CHECK:           %[[C1:.+]] = arith.maxsi %{{.*}}, %[[LO]] : i32
// CHECK-NEXT:      %[[C2:.+]] = arith.minsi %[[C1]], %[[HI]] : i32
// CHECK-NEXT:      %[[ROW:.+]] = arith.index_cast %[[C2]] : i32 to index
// CHECK-NEXT:      %[[H:.+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[V:.+]] = tensor.extract %[[T]][%[[ROW]], %[[H]]] : tensor<7x3xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         return %[[R]] : tensor<2x3x4x5xf32>
// CHECK-NOT:     tosa.transpose
func.func @spatial_bias_rank3(%d: tensor<2x4x5xi32>, %t: tensor<7x3xf32>) -> tensor<2x3x4x5xf32> {
  %0 = gt.spatial_bias %d, %t : (tensor<2x4x5xi32>, tensor<7x3xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

//===----------------------------------------------------------------------===//
// gt.attention: kept by default, decomposed with keep-attention=false
//===----------------------------------------------------------------------===//

// -----

// B = 2, Sq = 4, Sk = 6, D = 8, Dv = 12, H = 2: dh = 4, dvh = 6, default
// scale 1/sqrt(4) = 0.5. Q -> [B*H, Sq, dh], K -> [B*H, dh, Sk],
// V -> [B*H, Sk, dvh]; scores [B, H, Sq, Sk]; softmax over axis 3.
// CHECK-LABEL: func.func @attention_plain
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x6x12xf32>)
// CHECK-NEXT:    %[[R:.+]] = gt.attention %[[Q]], %[[K]], %[[V]] heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x12xf32>) -> tensor<2x4x12xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x4x12xf32>

// REF-LABEL: func.func @attention_plain
// REF-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x6x12xf32>)
// REF-NOT:     gt.attention
// REF-DAG:     %[[OUT:.+]] = tosa.const_shape {values = dense<[2, 4, 12]> : tensor<3xindex>}
// REF-DAG:     %[[SH:.+]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// REF-DAG:     %[[SCALE:.+]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1x1x1xf32>}>
// REF-DAG:     %[[S4:.+]] = tosa.const_shape {values = dense<[2, 2, 4, 6]> : tensor<4xindex>}
// REF-DAG:     %[[ZP:.+]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}>
// REF-DAG:     %[[VS3:.+]] = tosa.const_shape {values = dense<[4, 6, 6]> : tensor<3xindex>}
// REF-DAG:     %[[VS4:.+]] = tosa.const_shape {values = dense<[2, 6, 2, 6]> : tensor<4xindex>}
// REF-DAG:     %[[KS3:.+]] = tosa.const_shape {values = dense<[4, 4, 6]> : tensor<3xindex>}
// REF-DAG:     %[[KS4:.+]] = tosa.const_shape {values = dense<[2, 6, 2, 4]> : tensor<4xindex>}
// REF-DAG:     %[[QS3:.+]] = tosa.const_shape {values = dense<4> : tensor<3xindex>}
// REF-DAG:     %[[QS4:.+]] = tosa.const_shape {values = dense<[2, 4, 2, 4]> : tensor<4xindex>}
// REF:         %[[Q4:.+]] = tosa.reshape %[[Q]], %[[QS4]] : (tensor<2x4x8xf32>, !tosa.shape<4>) -> tensor<2x4x2x4xf32>
// REF-NEXT:    %[[QT:.+]] = tosa.transpose %[[Q4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x4x2x4xf32>) -> tensor<2x2x4x4xf32>
// REF-NEXT:    %[[Q3:.+]] = tosa.reshape %[[QT]], %[[QS3]] : (tensor<2x2x4x4xf32>, !tosa.shape<3>) -> tensor<4x4x4xf32>
// REF-NEXT:    %[[K4:.+]] = tosa.reshape %[[K]], %[[KS4]] : (tensor<2x6x8xf32>, !tosa.shape<4>) -> tensor<2x6x2x4xf32>
// REF-NEXT:    %[[KT:.+]] = tosa.transpose %[[K4]] {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x6x2x4xf32>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[K3:.+]] = tosa.reshape %[[KT]], %[[KS3]] : (tensor<2x2x4x6xf32>, !tosa.shape<3>) -> tensor<4x4x6xf32>
// REF-NEXT:    %[[V4:.+]] = tosa.reshape %[[V]], %[[VS4]] : (tensor<2x6x12xf32>, !tosa.shape<4>) -> tensor<2x6x2x6xf32>
// REF-NEXT:    %[[VT:.+]] = tosa.transpose %[[V4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x6x2x6xf32>) -> tensor<2x2x6x6xf32>
// REF-NEXT:    %[[V3:.+]] = tosa.reshape %[[VT]], %[[VS3]] : (tensor<2x2x6x6xf32>, !tosa.shape<3>) -> tensor<4x6x6xf32>
// REF-NEXT:    %[[QK:.+]] = tosa.matmul %[[Q3]], %[[K3]], %[[ZP]], %[[ZP]] : (tensor<4x4x4xf32>, tensor<4x4x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x4x6xf32>
// REF-NEXT:    %[[S:.+]] = tosa.reshape %[[QK]], %[[S4]] : (tensor<4x4x6xf32>, !tosa.shape<4>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[SS:.+]] = tosa.mul %[[S]], %[[SCALE]], %[[SH]] : (tensor<2x2x4x6xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[MX:.+]] = tosa.reduce_max %[[SS]] {axis = 3 : i32} : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[D:.+]] = tosa.sub %[[SS]], %[[MX]] : (tensor<2x2x4x6xf32>, tensor<2x2x4x1xf32>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[EX:.+]] = tosa.exp %[[D]] : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[SUM:.+]] = tosa.reduce_sum %[[EX]] {axis = 3 : i32} : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[RCP:.+]] = tosa.reciprocal %[[SUM]] : (tensor<2x2x4x1xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[P:.+]] = tosa.mul %[[EX]], %[[RCP]], %[[SH]] : (tensor<2x2x4x6xf32>, tensor<2x2x4x1xf32>, tensor<1xi8>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[P3:.+]] = tosa.reshape %[[P]], %[[KS3]] : (tensor<2x2x4x6xf32>, !tosa.shape<3>) -> tensor<4x4x6xf32>
// REF-NEXT:    %[[PV:.+]] = tosa.matmul %[[P3]], %[[V3]], %[[ZP]], %[[ZP]] : (tensor<4x4x6xf32>, tensor<4x6x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x4x6xf32>
// REF-NEXT:    %[[O4:.+]] = tosa.reshape %[[PV]], %[[S4]] : (tensor<4x4x6xf32>, !tosa.shape<4>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[OT:.+]] = tosa.transpose %[[O4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x2x4x6xf32>) -> tensor<2x4x2x6xf32>
// REF-NEXT:    %[[R:.+]] = tosa.reshape %[[OT]], %[[OUT]] : (tensor<2x4x2x6xf32>, !tosa.shape<3>) -> tensor<2x4x12xf32>
// REF-NEXT:    return %[[R]] : tensor<2x4x12xf32>
func.func @attention_plain(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>,
                           %v: tensor<2x6x12xf32>) -> tensor<2x4x12xf32> {
  %0 = gt.attention %q, %k, %v heads = 2 : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x12xf32>) -> tensor<2x4x12xf32>
  return %0 : tensor<2x4x12xf32>
}

// -----

// Rank-3 bias [H, Sq, Sk] (reshaped to 1xHxSqxSk and added after the scale
// 0.25), rank-2 mask [Sq, Sk] (reshaped to 1x1xSqxSk, selects -inf); rows
// without a kept score get max 0 and sum 1, so they yield zeros.
// CHECK-LABEL: func.func @attention_bias_mask
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x6x12xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x4x6xf32>, %[[M:[a-zA-Z0-9_]+]]: tensor<4x6xi1>)
// CHECK-NEXT:    %[[R:.+]] = gt.attention %[[Q]], %[[K]], %[[V]] bias(%[[B]]) mask(%[[M]]) heads = 2 {scale = 2.500000e-01 : f32} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x12xf32>, tensor<2x4x6xf32>, tensor<4x6xi1>) -> tensor<2x4x12xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x4x12xf32>

// REF-LABEL: func.func @attention_bias_mask
// REF-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x6x8xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x6x12xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x4x6xf32>, %[[M:[a-zA-Z0-9_]+]]: tensor<4x6xi1>)
// REF-NOT:     gt.attention
// REF-DAG:     %[[OUT:.+]] = tosa.const_shape {values = dense<[2, 4, 12]> : tensor<3xindex>}
// REF-DAG:     %[[ONE:.+]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1x1x1xf32>}>
// REF-DAG:     %[[ZERO:.+]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1x1x1x1xf32>}>
// REF-DAG:     %[[NINF:.+]] = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1x1x1xf32>}>
// REF-DAG:     %[[MS:.+]] = tosa.const_shape {values = dense<[1, 1, 4, 6]> : tensor<4xindex>}
// REF-DAG:     %[[BS:.+]] = tosa.const_shape {values = dense<[1, 2, 4, 6]> : tensor<4xindex>}
// REF-DAG:     %[[SH:.+]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// REF-DAG:     %[[SCALE:.+]] = "tosa.const"() <{values = dense<2.500000e-01> : tensor<1x1x1x1xf32>}>
// REF-DAG:     %[[S4:.+]] = tosa.const_shape {values = dense<[2, 2, 4, 6]> : tensor<4xindex>}
// REF-DAG:     %[[ZP:.+]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}>
// REF-DAG:     %[[KS3:.+]] = tosa.const_shape {values = dense<[4, 4, 6]> : tensor<3xindex>}
// REF:         %[[QK:.+]] = tosa.matmul %{{.+}}, %{{.+}}, %[[ZP]], %[[ZP]] : (tensor<4x4x4xf32>, tensor<4x4x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x4x6xf32>
// REF-NEXT:    %[[S:.+]] = tosa.reshape %[[QK]], %[[S4]] : (tensor<4x4x6xf32>, !tosa.shape<4>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[SS:.+]] = tosa.mul %[[S]], %[[SCALE]], %[[SH]] : (tensor<2x2x4x6xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[B4:.+]] = tosa.reshape %[[B]], %[[BS]] : (tensor<2x4x6xf32>, !tosa.shape<4>) -> tensor<1x2x4x6xf32>
// REF-NEXT:    %[[SB:.+]] = tosa.add %[[SS]], %[[B4]] : (tensor<2x2x4x6xf32>, tensor<1x2x4x6xf32>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[M4:.+]] = tosa.reshape %[[M]], %[[MS]] : (tensor<4x6xi1>, !tosa.shape<4>) -> tensor<1x1x4x6xi1>
// REF-NEXT:    %[[MSK:.+]] = tosa.select %[[M4]], %[[SB]], %[[NINF]] : (tensor<1x1x4x6xi1>, tensor<2x2x4x6xf32>, tensor<1x1x1x1xf32>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[MX:.+]] = tosa.reduce_max %[[MSK]] {axis = 3 : i32} : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[EMPTY:.+]] = tosa.equal %[[MX]], %[[NINF]] : (tensor<2x2x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x2x4x1xi1>
// REF-NEXT:    %[[MX0:.+]] = tosa.select %[[EMPTY]], %[[ZERO]], %[[MX]] : (tensor<2x2x4x1xi1>, tensor<1x1x1x1xf32>, tensor<2x2x4x1xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[D:.+]] = tosa.sub %[[MSK]], %[[MX0]] : (tensor<2x2x4x6xf32>, tensor<2x2x4x1xf32>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[EX:.+]] = tosa.exp %[[D]] : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[SUM:.+]] = tosa.reduce_sum %[[EX]] {axis = 3 : i32} : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[Z:.+]] = tosa.equal %[[SUM]], %[[ZERO]] : (tensor<2x2x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x2x4x1xi1>
// REF-NEXT:    %[[SUM1:.+]] = tosa.select %[[Z]], %[[ONE]], %[[SUM]] : (tensor<2x2x4x1xi1>, tensor<1x1x1x1xf32>, tensor<2x2x4x1xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[RCP:.+]] = tosa.reciprocal %[[SUM1]] : (tensor<2x2x4x1xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[P:.+]] = tosa.mul %[[EX]], %[[RCP]], %[[SH]] : (tensor<2x2x4x6xf32>, tensor<2x2x4x1xf32>, tensor<1xi8>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[P3:.+]] = tosa.reshape %[[P]], %[[KS3]] : (tensor<2x2x4x6xf32>, !tosa.shape<3>) -> tensor<4x4x6xf32>
// REF-NEXT:    %[[PV:.+]] = tosa.matmul %[[P3]], %{{.+}}, %[[ZP]], %[[ZP]] : (tensor<4x4x6xf32>, tensor<4x6x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x4x6xf32>
// REF-NEXT:    %[[O4:.+]] = tosa.reshape %[[PV]], %[[S4]] : (tensor<4x4x6xf32>, !tosa.shape<4>) -> tensor<2x2x4x6xf32>
// REF-NEXT:    %[[OT:.+]] = tosa.transpose %[[O4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x2x4x6xf32>) -> tensor<2x4x2x6xf32>
// REF-NEXT:    %[[R:.+]] = tosa.reshape %[[OT]], %[[OUT]] : (tensor<2x4x2x6xf32>, !tosa.shape<3>) -> tensor<2x4x12xf32>
// REF-NEXT:    return %[[R]] : tensor<2x4x12xf32>
func.func @attention_bias_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>,
                               %v: tensor<2x6x12xf32>, %b: tensor<2x4x6xf32>,
                               %m: tensor<4x6xi1>) -> tensor<2x4x12xf32> {
  %0 = gt.attention %q, %k, %v bias(%b) mask(%m) heads = 2 {scale = 0.25 : f32}
      : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x12xf32>,
         tensor<2x4x6xf32>, tensor<4x6xi1>) -> tensor<2x4x12xf32>
  return %0 : tensor<2x4x12xf32>
}

// -----

// Rank-4 bias broadcast over the batch [1, H, Sq, Sk]: added as is (no
// reshape); no mask, so the plain softmax (no select) follows.
// CHECK-LABEL: func.func @attention_bias_rank4
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<1x2x4x4xf32>)
// CHECK-NEXT:    %[[R:.+]] = gt.attention %[[Q]], %[[Q]], %[[Q]] bias(%[[B]]) heads = 2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x2x4x4xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x4x8xf32>

// REF-LABEL: func.func @attention_bias_rank4
// REF-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<1x2x4x4xf32>)
// REF-NOT:     gt.attention
// REF-NOT:     tosa.select
// REF:         %[[QK:.+]] = tosa.matmul %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<4x4x4xf32>, tensor<4x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x4x4xf32>
// REF-NEXT:    %[[S:.+]] = tosa.reshape %[[QK]], %{{.+}} : (tensor<4x4x4xf32>, !tosa.shape<4>) -> tensor<2x2x4x4xf32>
// REF-NEXT:    %[[SS:.+]] = tosa.mul %[[S]], %{{.+}}, %{{.+}} : (tensor<2x2x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<2x2x4x4xf32>
// REF-NEXT:    %[[SB:.+]] = tosa.add %[[SS]], %[[B]] : (tensor<2x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<2x2x4x4xf32>
// REF-NEXT:    %[[MX:.+]] = tosa.reduce_max %[[SB]] {axis = 3 : i32} : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[D:.+]] = tosa.sub %[[SB]], %[[MX]] :
// REF-NEXT:    %[[EX:.+]] = tosa.exp %[[D]] :
// REF-NEXT:    %[[SUM:.+]] = tosa.reduce_sum %[[EX]] {axis = 3 : i32} : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x1xf32>
// REF-NEXT:    %[[RCP:.+]] = tosa.reciprocal %[[SUM]] :
// REF-NEXT:    %[[P:.+]] = tosa.mul %[[EX]], %[[RCP]], %{{.+}} :
// REF-NOT:     tosa.select
// REF:         return %{{.+}} : tensor<2x4x8xf32>
func.func @attention_bias_rank4(%q: tensor<2x4x8xf32>, %b: tensor<1x2x4x4xf32>) -> tensor<2x4x8xf32> {
  %0 = gt.attention %q, %q, %q bias(%b) heads = 2
      : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>,
         tensor<1x2x4x4xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

//===----------------------------------------------------------------------===//
// linalg.softmax
//===----------------------------------------------------------------------===//

// -----

// Max (maxnumf, NaN identity), exp(x - max), sum, divide: four linalg.generic.
// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x5xf32>)
// CHECK-NOT:     linalg.softmax
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[NAN:.+]] = arith.constant 0xFFC00000 : f32
// CHECK-DAG:     %[[OUT:.+]] = tensor.empty() : tensor<2x5xf32>
// CHECK-DAG:     %[[RED:.+]] = tensor.empty() : tensor<2xf32>
// CHECK:         %[[MXI:.+]] = linalg.fill ins(%[[NAN]] : f32) outs(%[[RED]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[MX:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x5xf32>) outs(%[[MXI]] : tensor<2xf32>)
// CHECK:           arith.maxnumf
// CHECK:         %[[EX:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MX]] : tensor<2x5xf32>, tensor<2xf32>) outs(%[[OUT]] : tensor<2x5xf32>)
// CHECK:           arith.subf
// CHECK-NEXT:      math.exp
// CHECK:         %[[SI:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[RED]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[EX]] : tensor<2x5xf32>) outs(%[[SI]] : tensor<2xf32>)
// CHECK:           arith.addf
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[EX]], %[[SUM]] : tensor<2x5xf32>, tensor<2xf32>) outs(%[[OUT]] : tensor<2x5xf32>)
// CHECK:           arith.divf
// CHECK:         return %[[R]] : tensor<2x5xf32>
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %e = tensor.empty() : tensor<2x5xf32>
  %0 = linalg.softmax dimension(1) ins(%x : tensor<2x5xf32>) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// gt.cross_entropy: logsumexp per row minus the label's logit (one-hot
// select against an iota), masked mean with the count clamped at 1.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-DAG:     %[[IOTA:.+]] = "tosa.const"() <{values = dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi64>}>
// CHECK:         tosa.reduce_max %{{.*}} {axis = 1 : i32} : (tensor<4x3xf32>) -> tensor<4x1xf32>
// CHECK:         tosa.log
// CHECK:         %[[HIT:.+]] = tosa.equal %{{.*}}, %[[IOTA]] : (tensor<4x1xi64>, tensor<1x3xi64>) -> tensor<4x3xi1>
// CHECK:         tosa.select %[[HIT]]
// CHECK:         tosa.cast %{{.*}} : (tensor<4x1xi1>) -> tensor<4x1xf32>
// CHECK:         tosa.maximum
// CHECK:         tosa.reshape %{{.*}} : (tensor<1x1xf32>, !tosa.shape<0>) -> tensor<f32>
// CHECK-NOT:     gt.cross_entropy
// REF-LABEL: func.func @cross_entropy
// REF-NOT:     gt.cross_entropy
func.func @cross_entropy(%l: tensor<4x3xf32>, %y: tensor<4xi64>, %m: tensor<4xi1>) -> tensor<f32> {
  %0 = gt.cross_entropy %l, %y mask(%m) : (tensor<4x3xf32>, tensor<4xi64>, tensor<4xi1>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Over more than 1024 rows the masked sums go by blocks of 1024 rows, then
// the block sums, then the rows left over (2500 = 2 x 1024 + 452): one
// float32 loop over all rows loses accuracy as the row count grows.
// CHECK-LABEL: func.func @cross_entropy_blocked
// CHECK-COUNT-2: tosa.reduce_sum %{{.*}} {axis = 1 : i32} : (tensor<2x1024xf32>) -> tensor<2x1xf32>
// CHECK-NOT:     tosa.reduce_sum %{{.*}} : (tensor<2500x1xf32>)
// CHECK:         tosa.maximum
// CHECK-LABEL: func.func @cross_entropy_exact_blocks
// CHECK-NOT:     tosa.slice
// CHECK:         tosa.reduce_sum %{{.*}} {axis = 1 : i32} : (tensor<3x1024xf32>) -> tensor<3x1xf32>
// CHECK-NOT:     tosa.reduce_sum %{{.*}} : (tensor<3072x1xf32>)
// CHECK:         tosa.maximum
func.func @cross_entropy_blocked(%l: tensor<2500x3xf32>, %y: tensor<2500xi64>, %m: tensor<2500xi1>) -> tensor<f32> {
  %0 = gt.cross_entropy %l, %y mask(%m) : (tensor<2500x3xf32>, tensor<2500xi64>, tensor<2500xi1>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @cross_entropy_exact_blocks(%l: tensor<3072x3xf32>, %y: tensor<3072xi64>) -> tensor<f32> {
  %0 = gt.cross_entropy %l, %y : (tensor<3072x3xf32>, tensor<3072xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// gt.edge_bias: one generic reducing over (hop, input head), then a
// division by the clamped path length broadcast over heads.
// CHECK-LABEL: func.func @edge_bias
// CHECK:         linalg.fill
// CHECK:         %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<5x5x3xi64>, tensor<3x2x2xf32>) outs(%{{.*}} : tensor<2x5x5xf32>)
// CHECK:           arith.cmpi sge
// CHECK:           tensor.extract
// CHECK:           arith.select
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[SUM]] : tensor<5x5xi64>, tensor<2x5x5xf32>)
// CHECK:           arith.sitofp
// CHECK:           arith.divf
// REF-LABEL: func.func @edge_bias
// REF-NOT:     gt.edge_bias
func.func @edge_bias(%p: tensor<5x5x3xi64>, %d: tensor<5x5xi64>, %t: tensor<6x2xf32>, %w: tensor<3x2x2xf32>) -> tensor<2x5x5xf32> {
  %0 = gt.edge_bias %p, %d, %t, %w : (tensor<5x5x3xi64>, tensor<5x5xi64>, tensor<6x2xf32>, tensor<3x2x2xf32>) -> tensor<2x5x5xf32>
  return %0 : tensor<2x5x5xf32>
}
