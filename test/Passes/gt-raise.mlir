// RUN: megagraph-opt %s --gt-raise --split-input-file | FileCheck %s
// RUN: megagraph-opt %s --gt-raise --split-input-file \
// RUN:   | megagraph-opt --gt-raise --split-input-file | FileCheck %s

// Tests of the gt-raise pass (passes/Raise/GTRaise.cpp): each pattern on
// small hand-written inputs in the form the ONNX importer produces (TOSA,
// linalg.softmax on tensor.empty, ml_program globals for parameters), with
// positive cases that must raise and negative cases that must stay as they
// are. The second RUN line raises the raised output again: the pass is
// idempotent.

//===----------------------------------------------------------------------===//
// GELU (erf form)
//===----------------------------------------------------------------------===//

// x * 0.5 * (1 + erf(x * 0.7071)).
// CHECK-LABEL: func.func @gelu_half_then_erf
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>)
// CHECK-NEXT:    %[[G:.+]] = gt.gelu %[[X]] : tensor<2x4x8xf32>
// CHECK-NEXT:    return %[[G]] : tensor<2x4x8xf32>
func.func @gelu_half_then_erf(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %half = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %c = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %one = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %0 = tosa.mul %x, %half, %sh : (tensor<2x4x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x4x8xf32>
  %1 = tosa.mul %x, %c, %sh : (tensor<2x4x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x4x8xf32>
  %2 = tosa.erf %1 : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %3 = tosa.add %one, %2 : (tensor<1x1x1xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %4 = tosa.mul %0, %3, %sh : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1xi8>) -> tensor<2x4x8xf32>
  return %4 : tensor<2x4x8xf32>
}

// -----

// The importer's form: (x * (1 + erf(x * (1 / 1.4142135)))) * 0.5 with rank-0
// constants reshaped to rank 3.
// CHECK-LABEL: func.func @gelu_importer_form
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>)
// CHECK-NEXT:    %[[G:.+]] = gt.gelu %[[X]] : tensor<2x4x8xf32>
// CHECK-NEXT:    return %[[G]] : tensor<2x4x8xf32>
func.func @gelu_importer_form(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ones = tosa.const_shape {values = dense<1> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sqrt2 = "tosa.const"() <{values = dense<1.41421354> : tensor<f32>}> : () -> tensor<f32>
  %0 = tosa.reshape %sqrt2, %ones : (tensor<f32>, !tosa.shape<3>) -> tensor<1x1x1xf32>
  %1 = tosa.reciprocal %0 : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %2 = tosa.mul %x, %1, %sh : (tensor<2x4x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x4x8xf32>
  %3 = tosa.erf %2 : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %one = "tosa.const"() <{values = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %4 = tosa.reshape %one, %ones : (tensor<f32>, !tosa.shape<3>) -> tensor<1x1x1xf32>
  %5 = tosa.add %3, %4 : (tensor<2x4x8xf32>, tensor<1x1x1xf32>) -> tensor<2x4x8xf32>
  %6 = tosa.mul %x, %5, %sh : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1xi8>) -> tensor<2x4x8xf32>
  %half = "tosa.const"() <{values = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
  %7 = tosa.reshape %half, %ones : (tensor<f32>, !tosa.shape<3>) -> tensor<1x1x1xf32>
  %8 = tosa.mul %6, %7, %sh : (tensor<2x4x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x4x8xf32>
  return %8 : tensor<2x4x8xf32>
}

// -----

// 0.5 * x * (erf(0.7071 * x) + 1): constants on the left.
// CHECK-LABEL: func.func @gelu_constants_first
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<16x8xf32>)
// CHECK-NEXT:    %[[G:.+]] = gt.gelu %[[X]] : tensor<16x8xf32>
// CHECK-NEXT:    return %[[G]] : tensor<16x8xf32>
func.func @gelu_constants_first(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %half = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %one = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %0 = tosa.mul %half, %x, %sh : (tensor<1x1xf32>, tensor<16x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %1 = tosa.mul %c, %x, %sh : (tensor<1x1xf32>, tensor<16x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %2 = tosa.erf %1 : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %3 = tosa.add %2, %one : (tensor<16x8xf32>, tensor<1x1xf32>) -> tensor<16x8xf32>
  %4 = tosa.mul %0, %3, %sh : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}

// -----

// 0.5 * (x * (1 + erf(x * 0.7071))): the half applied last, on the left.
// CHECK-LABEL: func.func @gelu_half_last
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<16x8xf32>)
// CHECK-NEXT:    %[[G:.+]] = gt.gelu %[[X]] : tensor<16x8xf32>
// CHECK-NEXT:    return %[[G]] : tensor<16x8xf32>
func.func @gelu_half_last(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %half = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %one = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %0 = tosa.mul %x, %c, %sh : (tensor<16x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %1 = tosa.erf %0 : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %2 = tosa.add %one, %1 : (tensor<1x1xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %3 = tosa.mul %x, %2, %sh : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %4 = tosa.mul %half, %3, %sh : (tensor<1x1xf32>, tensor<16x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}

// -----

// Negative: 0.6 instead of 0.5 as the outer factor.
// CHECK-LABEL: func.func @gelu_wrong_half
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<16x8xf32>)
// CHECK-NOT:     gt.
// CHECK-DAG:     %[[HALF:.+]] = "tosa.const"() <{values = dense<6.000000e-01> : tensor<1x1xf32>}>
// CHECK-DAG:     %[[C:.+]] = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}>
// CHECK-DAG:     %[[ONE:.+]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK-NOT:     gt.
// CHECK:         %[[H:.+]] = tosa.mul %[[X]], %[[HALF]], %{{.+}} :
// CHECK-NEXT:    %[[S:.+]] = tosa.mul %[[X]], %[[C]], %{{.+}} :
// CHECK-NEXT:    %[[E:.+]] = tosa.erf %[[S]] :
// CHECK-NEXT:    %[[P:.+]] = tosa.add %[[E]], %[[ONE]] :
// CHECK-NEXT:    %[[R:.+]] = tosa.mul %[[H]], %[[P]], %{{.+}} :
// CHECK-NEXT:    return %[[R]] : tensor<16x8xf32>
func.func @gelu_wrong_half(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %half = "tosa.const"() <{values = dense<6.000000e-01> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %one = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %0 = tosa.mul %x, %half, %sh : (tensor<16x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %1 = tosa.mul %x, %c, %sh : (tensor<16x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %2 = tosa.erf %1 : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %3 = tosa.add %one, %2 : (tensor<1x1xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %4 = tosa.mul %0, %3, %sh : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}

// -----

// Negative: erf(x * 0.6) is not erf(x / sqrt(2)).
// CHECK-LABEL: func.func @gelu_wrong_erf_scale
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<16x8xf32>)
// CHECK-NOT:     gt.
// CHECK-DAG:     %[[HALF:.+]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1xf32>}>
// CHECK-DAG:     %[[C:.+]] = "tosa.const"() <{values = dense<6.000000e-01> : tensor<1x1xf32>}>
// CHECK-DAG:     %[[ONE:.+]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK-NOT:     gt.
// CHECK:         %[[H:.+]] = tosa.mul %[[X]], %[[HALF]], %{{.+}} :
// CHECK-NEXT:    %[[S:.+]] = tosa.mul %[[X]], %[[C]], %{{.+}} :
// CHECK-NEXT:    %[[E:.+]] = tosa.erf %[[S]] :
// CHECK-NEXT:    %[[P:.+]] = tosa.add %[[E]], %[[ONE]] :
// CHECK-NEXT:    %[[R:.+]] = tosa.mul %[[H]], %[[P]], %{{.+}} :
// CHECK-NEXT:    return %[[R]] : tensor<16x8xf32>
func.func @gelu_wrong_erf_scale(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %half = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = "tosa.const"() <{values = dense<6.000000e-01> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %one = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %0 = tosa.mul %x, %half, %sh : (tensor<16x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %1 = tosa.mul %x, %c, %sh : (tensor<16x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %2 = tosa.erf %1 : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %3 = tosa.add %one, %2 : (tensor<1x1xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %4 = tosa.mul %0, %3, %sh : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}

// -----

// Negative: erf of another value than the one multiplied.
// CHECK-LABEL: func.func @gelu_erf_of_other_value
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<16x8xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<16x8xf32>)
// CHECK-NOT:     gt.
// CHECK-DAG:     %[[HALF:.+]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1xf32>}>
// CHECK-DAG:     %[[C:.+]] = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}>
// CHECK-DAG:     %[[ONE:.+]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK-NOT:     gt.
// CHECK:         %[[H:.+]] = tosa.mul %[[X]], %[[HALF]], %{{.+}} :
// CHECK-NEXT:    %[[S:.+]] = tosa.mul %[[Y]], %[[C]], %{{.+}} :
// CHECK-NEXT:    %[[E:.+]] = tosa.erf %[[S]] :
// CHECK-NEXT:    %[[P:.+]] = tosa.add %[[E]], %[[ONE]] :
// CHECK-NEXT:    %[[R:.+]] = tosa.mul %[[H]], %[[P]], %{{.+}} :
// CHECK-NEXT:    return %[[R]] : tensor<16x8xf32>
func.func @gelu_erf_of_other_value(%x: tensor<16x8xf32>, %y: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %half = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %one = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %0 = tosa.mul %x, %half, %sh : (tensor<16x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %1 = tosa.mul %y, %c, %sh : (tensor<16x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  %2 = tosa.erf %1 : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %3 = tosa.add %one, %2 : (tensor<1x1xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %4 = tosa.mul %0, %3, %sh : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

ml_program.global private mutable @w(dense<1.000000e-01> : tensor<8x16xf32>) : tensor<8x16xf32>

// CHECK-LABEL: func.func @linear_no_bias
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x5x8xf32>)
// CHECK-NEXT:    %[[W:.+]] = ml_program.global_load @w : tensor<8x16xf32>
// CHECK-NEXT:    %[[Y:.+]] = gt.linear %[[X]], %[[W]] : (tensor<2x5x8xf32>, tensor<8x16xf32>) -> tensor<2x5x16xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<2x5x16xf32>
func.func @linear_no_bias(%x: tensor<2x5x8xf32>) -> tensor<2x5x16xf32> {
  %w = ml_program.global_load @w : tensor<8x16xf32>
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s0 = tosa.const_shape {values = dense<[1, 10, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %x, %s0 : (tensor<2x5x8xf32>, !tosa.shape<3>) -> tensor<1x10x8xf32>
  %s1 = tosa.const_shape {values = dense<[1, 8, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %1 = tosa.reshape %w, %s1 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %2 = tosa.matmul %0, %1, %zp, %zp : (tensor<1x10x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 5, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %3 = tosa.reshape %2, %s2 : (tensor<1x10x16xf32>, !tosa.shape<3>) -> tensor<2x5x16xf32>
  return %3 : tensor<2x5x16xf32>
}

// -----

ml_program.global private mutable @w(dense<1.000000e-01> : tensor<8x16xf32>) : tensor<8x16xf32>
ml_program.global private mutable @b(dense<2.000000e-01> : tensor<16xf32>) : tensor<16xf32>

// The bias, reshaped to [1, 1, N] and added on the left, folds in.
// CHECK-LABEL: func.func @linear_bias
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x5x8xf32>)
// CHECK-NEXT:    %[[W:.+]] = ml_program.global_load @w : tensor<8x16xf32>
// CHECK-NEXT:    %[[B:.+]] = ml_program.global_load @b : tensor<16xf32>
// CHECK-NEXT:    %[[Y:.+]] = gt.linear %[[X]], %[[W]], %[[B]] : (tensor<2x5x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<2x5x16xf32>
func.func @linear_bias(%x: tensor<2x5x8xf32>) -> tensor<2x5x16xf32> {
  %w = ml_program.global_load @w : tensor<8x16xf32>
  %b = ml_program.global_load @b : tensor<16xf32>
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s0 = tosa.const_shape {values = dense<[1, 10, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %x, %s0 : (tensor<2x5x8xf32>, !tosa.shape<3>) -> tensor<1x10x8xf32>
  %s1 = tosa.const_shape {values = dense<[1, 8, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %1 = tosa.reshape %w, %s1 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %2 = tosa.matmul %0, %1, %zp, %zp : (tensor<1x10x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 5, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %3 = tosa.reshape %2, %s2 : (tensor<1x10x16xf32>, !tosa.shape<3>) -> tensor<2x5x16xf32>
  %s3 = tosa.const_shape {values = dense<[1, 1, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %4 = tosa.reshape %b, %s3 : (tensor<16xf32>, !tosa.shape<3>) -> tensor<1x1x16xf32>
  %5 = tosa.add %4, %3 : (tensor<1x1x16xf32>, tensor<2x5x16xf32>) -> tensor<2x5x16xf32>
  return %5 : tensor<2x5x16xf32>
}

// -----

// Negative: the weight is an activation, not a parameter.
// CHECK-LABEL: func.func @linear_weight_argument
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x5x8xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<8x16xf32>)
// CHECK-NOT:     gt.
// CHECK:         %[[XR:.+]] = tosa.reshape %[[X]], %{{.+}} : (tensor<2x5x8xf32>, !tosa.shape<3>) -> tensor<1x10x8xf32>
// CHECK-NEXT:    %[[WR:.+]] = tosa.reshape %[[W]], %{{.+}} : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
// CHECK-NEXT:    %[[MM:.+]] = tosa.matmul %[[XR]], %[[WR]], %{{.+}}, %{{.+}} : (tensor<1x10x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x16xf32>
// CHECK-NEXT:    %[[Y:.+]] = tosa.reshape %[[MM]], %{{.+}} : (tensor<1x10x16xf32>, !tosa.shape<3>) -> tensor<2x5x16xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<2x5x16xf32>
func.func @linear_weight_argument(%x: tensor<2x5x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x5x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s0 = tosa.const_shape {values = dense<[1, 10, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %x, %s0 : (tensor<2x5x8xf32>, !tosa.shape<3>) -> tensor<1x10x8xf32>
  %s1 = tosa.const_shape {values = dense<[1, 8, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %1 = tosa.reshape %w, %s1 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %2 = tosa.matmul %0, %1, %zp, %zp : (tensor<1x10x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 5, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %3 = tosa.reshape %2, %s2 : (tensor<1x10x16xf32>, !tosa.shape<3>) -> tensor<2x5x16xf32>
  return %3 : tensor<2x5x16xf32>
}

// -----

ml_program.global private mutable @w(dense<1.000000e-01> : tensor<8x16xf32>) : tensor<8x16xf32>

// Negative for the bias: an activation added after the matmul stays an add.
// CHECK-LABEL: func.func @linear_bias_argument
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x5x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<1x1x16xf32>)
// CHECK-NEXT:    %[[W:.+]] = ml_program.global_load @w : tensor<8x16xf32>
// CHECK-NEXT:    %[[Y:.+]] = gt.linear %[[X]], %[[W]] : (tensor<2x5x8xf32>, tensor<8x16xf32>) -> tensor<2x5x16xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.add %[[Y]], %[[B]] : (tensor<2x5x16xf32>, tensor<1x1x16xf32>) -> tensor<2x5x16xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x5x16xf32>
func.func @linear_bias_argument(%x: tensor<2x5x8xf32>, %b: tensor<1x1x16xf32>) -> tensor<2x5x16xf32> {
  %w = ml_program.global_load @w : tensor<8x16xf32>
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s0 = tosa.const_shape {values = dense<[1, 10, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %x, %s0 : (tensor<2x5x8xf32>, !tosa.shape<3>) -> tensor<1x10x8xf32>
  %s1 = tosa.const_shape {values = dense<[1, 8, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %1 = tosa.reshape %w, %s1 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %2 = tosa.matmul %0, %1, %zp, %zp : (tensor<1x10x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 5, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %3 = tosa.reshape %2, %s2 : (tensor<1x10x16xf32>, !tosa.shape<3>) -> tensor<2x5x16xf32>
  %4 = tosa.add %3, %b : (tensor<2x5x16xf32>, tensor<1x1x16xf32>) -> tensor<2x5x16xf32>
  return %4 : tensor<2x5x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Spatial bias
//===----------------------------------------------------------------------===//

ml_program.global private mutable @spatial(dense<1.000000e+00> : tensor<8x4xf32>) : tensor<8x4xf32>

// [B, S, S] distances -> [B, H, S, S].
// CHECK-LABEL: func.func @spatial_bias_batched
// CHECK-SAME:    (%[[SPD:[a-zA-Z0-9_]+]]: tensor<2x6x6xi64>)
// CHECK-NEXT:    %[[T:.+]] = ml_program.global_load @spatial : tensor<8x4xf32>
// CHECK-NEXT:    %[[B:.+]] = gt.spatial_bias %[[SPD]], %[[T]] : (tensor<2x6x6xi64>, tensor<8x4xf32>) -> tensor<2x4x6x6xf32>
// CHECK-NEXT:    return %[[B]] : tensor<2x4x6x6xf32>
func.func @spatial_bias_batched(%spd: tensor<2x6x6xi64>) -> tensor<2x4x6x6xf32> {
  %table = ml_program.global_load @spatial : tensor<8x4xf32>
  %s0 = tosa.const_shape {values = dense<[1, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %table, %s0 : (tensor<8x4xf32>, !tosa.shape<3>) -> tensor<1x8x4xf32>
  %1 = tosa.cast %spd : (tensor<2x6x6xi64>) -> tensor<2x6x6xi32>
  %s1 = tosa.const_shape {values = dense<[1, 72]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %s1 : (tensor<2x6x6xi32>, !tosa.shape<2>) -> tensor<1x72xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x8x4xf32>, tensor<1x72xi32>) -> tensor<1x72x4xf32>
  %s2 = tosa.const_shape {values = dense<[2, 6, 6, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %4 = tosa.reshape %3, %s2 : (tensor<1x72x4xf32>, !tosa.shape<4>) -> tensor<2x6x6x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 3, 1, 2>} : (tensor<2x6x6x4xf32>) -> tensor<2x4x6x6xf32>
  return %5 : tensor<2x4x6x6xf32>
}

// -----

ml_program.global private mutable @spatial(dense<1.000000e+00> : tensor<8x4xf32>) : tensor<8x4xf32>

// [S, S] distances -> [H, S, S].
// CHECK-LABEL: func.func @spatial_bias_unbatched
// CHECK-SAME:    (%[[SPD:[a-zA-Z0-9_]+]]: tensor<6x6xi64>)
// CHECK-NEXT:    %[[T:.+]] = ml_program.global_load @spatial : tensor<8x4xf32>
// CHECK-NEXT:    %[[B:.+]] = gt.spatial_bias %[[SPD]], %[[T]] : (tensor<6x6xi64>, tensor<8x4xf32>) -> tensor<4x6x6xf32>
// CHECK-NEXT:    return %[[B]] : tensor<4x6x6xf32>
func.func @spatial_bias_unbatched(%spd: tensor<6x6xi64>) -> tensor<4x6x6xf32> {
  %table = ml_program.global_load @spatial : tensor<8x4xf32>
  %s0 = tosa.const_shape {values = dense<[1, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %table, %s0 : (tensor<8x4xf32>, !tosa.shape<3>) -> tensor<1x8x4xf32>
  %1 = tosa.cast %spd : (tensor<6x6xi64>) -> tensor<6x6xi32>
  %s1 = tosa.const_shape {values = dense<[1, 36]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %s1 : (tensor<6x6xi32>, !tosa.shape<2>) -> tensor<1x36xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x8x4xf32>, tensor<1x36xi32>) -> tensor<1x36x4xf32>
  %s2 = tosa.const_shape {values = dense<[6, 6, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %4 = tosa.reshape %3, %s2 : (tensor<1x36x4xf32>, !tosa.shape<3>) -> tensor<6x6x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 2, 0, 1>} : (tensor<6x6x4xf32>) -> tensor<4x6x6xf32>
  return %5 : tensor<4x6x6xf32>
}

// -----

ml_program.global private mutable @spatial(dense<1.000000e+00> : tensor<8x4xf32>) : tensor<8x4xf32>

// Negative: the transpose also swaps the node pair (bias[b, h, j, i]).
// CHECK-LABEL: func.func @spatial_bias_wrong_perm
// CHECK-SAME:    (%[[SPD:[a-zA-Z0-9_]+]]: tensor<2x6x6xi64>)
// CHECK-NOT:     gt.
// CHECK:         %[[T:.+]] = ml_program.global_load @spatial : tensor<8x4xf32>
// CHECK-NEXT:    %[[TR:.+]] = tosa.reshape %[[T]], %{{.+}} : (tensor<8x4xf32>, !tosa.shape<3>) -> tensor<1x8x4xf32>
// CHECK-NEXT:    %[[I:.+]] = tosa.cast %[[SPD]] : (tensor<2x6x6xi64>) -> tensor<2x6x6xi32>
// CHECK-NEXT:    %[[IR:.+]] = tosa.reshape %[[I]], %{{.+}} : (tensor<2x6x6xi32>, !tosa.shape<2>) -> tensor<1x72xi32>
// CHECK-NEXT:    %[[G:.+]] = tosa.gather %[[TR]], %[[IR]] : (tensor<1x8x4xf32>, tensor<1x72xi32>) -> tensor<1x72x4xf32>
// CHECK-NEXT:    %[[GR:.+]] = tosa.reshape %[[G]], %{{.+}} : (tensor<1x72x4xf32>, !tosa.shape<4>) -> tensor<2x6x6x4xf32>
// CHECK-NEXT:    %[[B:.+]] = tosa.transpose %[[GR]] {perms = array<i32: 0, 3, 2, 1>} : (tensor<2x6x6x4xf32>) -> tensor<2x4x6x6xf32>
// CHECK-NEXT:    return %[[B]] : tensor<2x4x6x6xf32>
func.func @spatial_bias_wrong_perm(%spd: tensor<2x6x6xi64>) -> tensor<2x4x6x6xf32> {
  %table = ml_program.global_load @spatial : tensor<8x4xf32>
  %s0 = tosa.const_shape {values = dense<[1, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %table, %s0 : (tensor<8x4xf32>, !tosa.shape<3>) -> tensor<1x8x4xf32>
  %1 = tosa.cast %spd : (tensor<2x6x6xi64>) -> tensor<2x6x6xi32>
  %s1 = tosa.const_shape {values = dense<[1, 72]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %s1 : (tensor<2x6x6xi32>, !tosa.shape<2>) -> tensor<1x72xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x8x4xf32>, tensor<1x72xi32>) -> tensor<1x72x4xf32>
  %s2 = tosa.const_shape {values = dense<[2, 6, 6, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %4 = tosa.reshape %3, %s2 : (tensor<1x72x4xf32>, !tosa.shape<4>) -> tensor<2x6x6x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 3, 2, 1>} : (tensor<2x6x6x4xf32>) -> tensor<2x4x6x6xf32>
  return %5 : tensor<2x4x6x6xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Node and degree embeddings
//===----------------------------------------------------------------------===//

ml_program.global private mutable @emb(dense<1.000000e+00> : tensor<10x16xf32>) : tensor<10x16xf32>

// CHECK-LABEL: func.func @node_embedding
// CHECK-SAME:    (%[[IDS:[a-zA-Z0-9_]+]]: tensor<2x6xi64>)
// CHECK-NEXT:    %[[T:.+]] = ml_program.global_load @emb : tensor<10x16xf32>
// CHECK-NEXT:    %[[E:.+]] = gt.node_embedding %[[IDS]], %[[T]] : (tensor<2x6xi64>, tensor<10x16xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    return %[[E]] : tensor<2x6x16xf32>
func.func @node_embedding(%ids: tensor<2x6xi64>) -> tensor<2x6x16xf32> {
  %table = ml_program.global_load @emb : tensor<10x16xf32>
  %s0 = tosa.const_shape {values = dense<[1, 10, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %table, %s0 : (tensor<10x16xf32>, !tosa.shape<3>) -> tensor<1x10x16xf32>
  %1 = tosa.cast %ids : (tensor<2x6xi64>) -> tensor<2x6xi32>
  %s1 = tosa.const_shape {values = dense<[1, 12]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %s1 : (tensor<2x6xi32>, !tosa.shape<2>) -> tensor<1x12xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x10x16xf32>, tensor<1x12xi32>) -> tensor<1x12x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %4 = tosa.reshape %3, %s2 : (tensor<1x12x16xf32>, !tosa.shape<3>) -> tensor<2x6x16xf32>
  return %4 : tensor<2x6x16xf32>
}

// -----

ml_program.global private mutable @emb(dense<1.000000e+00> : tensor<10x16xf32>) : tensor<10x16xf32>

// Graphormer's atom encoder: three categorical features per node, summed.
// CHECK-LABEL: func.func @node_embedding_sum_features
// CHECK-SAME:    (%[[IDS:[a-zA-Z0-9_]+]]: tensor<2x6x3xi64>)
// CHECK-NEXT:    %[[T:.+]] = ml_program.global_load @emb : tensor<10x16xf32>
// CHECK-NEXT:    %[[E:.+]] = gt.node_embedding %[[IDS]], %[[T]] {sum_features} : (tensor<2x6x3xi64>, tensor<10x16xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    return %[[E]] : tensor<2x6x16xf32>
func.func @node_embedding_sum_features(%ids: tensor<2x6x3xi64>) -> tensor<2x6x16xf32> {
  %table = ml_program.global_load @emb : tensor<10x16xf32>
  %s0 = tosa.const_shape {values = dense<[1, 10, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %table, %s0 : (tensor<10x16xf32>, !tosa.shape<3>) -> tensor<1x10x16xf32>
  %1 = tosa.cast %ids : (tensor<2x6x3xi64>) -> tensor<2x6x3xi32>
  %s1 = tosa.const_shape {values = dense<[1, 36]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %s1 : (tensor<2x6x3xi32>, !tosa.shape<2>) -> tensor<1x36xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x10x16xf32>, tensor<1x36xi32>) -> tensor<1x36x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 6, 3, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %4 = tosa.reshape %3, %s2 : (tensor<1x36x16xf32>, !tosa.shape<4>) -> tensor<2x6x3x16xf32>
  %5 = tosa.reduce_sum %4 {axis = 2 : i32} : (tensor<2x6x3x16xf32>) -> tensor<2x6x1x16xf32>
  %s3 = tosa.const_shape {values = dense<[2, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %5, %s3 : (tensor<2x6x1x16xf32>, !tosa.shape<3>) -> tensor<2x6x16xf32>
  return %6 : tensor<2x6x16xf32>
}

// -----

ml_program.global private mutable @emb(dense<1.000000e+00> : tensor<10x16xf32>) : tensor<10x16xf32>

// Negative for sum_features: the sum runs over the embedding dim, not over
// the features; only the lookup is raised.
// CHECK-LABEL: func.func @node_embedding_sum_embedding_dim
// CHECK-SAME:    (%[[IDS:[a-zA-Z0-9_]+]]: tensor<2x6x3xi64>)
// CHECK-NEXT:    %[[T:.+]] = ml_program.global_load @emb : tensor<10x16xf32>
// CHECK-NEXT:    %[[E:.+]] = gt.node_embedding %[[IDS]], %[[T]] : (tensor<2x6x3xi64>, tensor<10x16xf32>) -> tensor<2x6x3x16xf32>
// CHECK-NEXT:    %[[S:.+]] = tosa.reduce_sum %[[E]] {axis = 3 : i32} : (tensor<2x6x3x16xf32>) -> tensor<2x6x3x1xf32>
// CHECK-NEXT:    return %[[S]] : tensor<2x6x3x1xf32>
func.func @node_embedding_sum_embedding_dim(%ids: tensor<2x6x3xi64>) -> tensor<2x6x3x1xf32> {
  %table = ml_program.global_load @emb : tensor<10x16xf32>
  %s0 = tosa.const_shape {values = dense<[1, 10, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %table, %s0 : (tensor<10x16xf32>, !tosa.shape<3>) -> tensor<1x10x16xf32>
  %1 = tosa.cast %ids : (tensor<2x6x3xi64>) -> tensor<2x6x3xi32>
  %s1 = tosa.const_shape {values = dense<[1, 36]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %s1 : (tensor<2x6x3xi32>, !tosa.shape<2>) -> tensor<1x36xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x10x16xf32>, tensor<1x36xi32>) -> tensor<1x36x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 6, 3, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %4 = tosa.reshape %3, %s2 : (tensor<1x36x16xf32>, !tosa.shape<4>) -> tensor<2x6x3x16xf32>
  %5 = tosa.reduce_sum %4 {axis = 3 : i32} : (tensor<2x6x3x16xf32>) -> tensor<2x6x3x1xf32>
  return %5 : tensor<2x6x3x1xf32>
}

// -----

// Negative: the table is an activation, not a parameter.
// CHECK-LABEL: func.func @node_embedding_table_argument
// CHECK-SAME:    (%[[IDS:[a-zA-Z0-9_]+]]: tensor<2x6xi64>, %[[T:[a-zA-Z0-9_]+]]: tensor<10x16xf32>)
// CHECK-NOT:     gt.
// CHECK:         %[[TR:.+]] = tosa.reshape %[[T]], %{{.+}} : (tensor<10x16xf32>, !tosa.shape<3>) -> tensor<1x10x16xf32>
// CHECK-NEXT:    %[[I:.+]] = tosa.cast %[[IDS]] : (tensor<2x6xi64>) -> tensor<2x6xi32>
// CHECK-NEXT:    %[[IR:.+]] = tosa.reshape %[[I]], %{{.+}} : (tensor<2x6xi32>, !tosa.shape<2>) -> tensor<1x12xi32>
// CHECK-NEXT:    %[[G:.+]] = tosa.gather %[[TR]], %[[IR]] : (tensor<1x10x16xf32>, tensor<1x12xi32>) -> tensor<1x12x16xf32>
// CHECK-NEXT:    %[[E:.+]] = tosa.reshape %[[G]], %{{.+}} : (tensor<1x12x16xf32>, !tosa.shape<3>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    return %[[E]] : tensor<2x6x16xf32>
func.func @node_embedding_table_argument(%ids: tensor<2x6xi64>, %table: tensor<10x16xf32>) -> tensor<2x6x16xf32> {
  %s0 = tosa.const_shape {values = dense<[1, 10, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %table, %s0 : (tensor<10x16xf32>, !tosa.shape<3>) -> tensor<1x10x16xf32>
  %1 = tosa.cast %ids : (tensor<2x6xi64>) -> tensor<2x6xi32>
  %s1 = tosa.const_shape {values = dense<[1, 12]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %s1 : (tensor<2x6xi32>, !tosa.shape<2>) -> tensor<1x12xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x10x16xf32>, tensor<1x12xi32>) -> tensor<1x12x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %4 = tosa.reshape %3, %s2 : (tensor<1x12x16xf32>, !tosa.shape<3>) -> tensor<2x6x16xf32>
  return %4 : tensor<2x6x16xf32>
}

// -----

ml_program.global private mutable @deg(dense<1.000000e+00> : tensor<5x16xf32>) : tensor<5x16xf32>

// x + embedding(degree), the embedding on the right.
// CHECK-LABEL: func.func @degree_embedding
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x6x16xf32>, %[[DEG:[a-zA-Z0-9_]+]]: tensor<2x6xi64>)
// CHECK-NEXT:    %[[T:.+]] = ml_program.global_load @deg : tensor<5x16xf32>
// CHECK-NEXT:    %[[Y:.+]] = gt.degree_embedding %[[X]], %[[DEG]], %[[T]] : (tensor<2x6x16xf32>, tensor<2x6xi64>, tensor<5x16xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<2x6x16xf32>
func.func @degree_embedding(%x: tensor<2x6x16xf32>, %degree: tensor<2x6xi64>) -> tensor<2x6x16xf32> {
  %table = ml_program.global_load @deg : tensor<5x16xf32>
  %s0 = tosa.const_shape {values = dense<[1, 5, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %table, %s0 : (tensor<5x16xf32>, !tosa.shape<3>) -> tensor<1x5x16xf32>
  %1 = tosa.cast %degree : (tensor<2x6xi64>) -> tensor<2x6xi32>
  %s1 = tosa.const_shape {values = dense<[1, 12]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %s1 : (tensor<2x6xi32>, !tosa.shape<2>) -> tensor<1x12xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x5x16xf32>, tensor<1x12xi32>) -> tensor<1x12x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %4 = tosa.reshape %3, %s2 : (tensor<1x12x16xf32>, !tosa.shape<3>) -> tensor<2x6x16xf32>
  %5 = tosa.add %x, %4 : (tensor<2x6x16xf32>, tensor<2x6x16xf32>) -> tensor<2x6x16xf32>
  return %5 : tensor<2x6x16xf32>
}

// -----

ml_program.global private mutable @atoms(dense<1.000000e+00> : tensor<10x16xf32>) : tensor<10x16xf32>
ml_program.global private mutable @in_deg(dense<2.000000e+00> : tensor<5x16xf32>) : tensor<5x16xf32>
ml_program.global private mutable @out_deg(dense<3.000000e+00> : tensor<5x16xf32>) : tensor<5x16xf32>

// Graphormer's node encoder: atom embedding + in-degree + out-degree
// embeddings, the embeddings on the right, then on the left of the adds.
// CHECK-LABEL: func.func @graphormer_node_encoder
// CHECK-SAME:    (%[[ATOMS:[a-zA-Z0-9_]+]]: tensor<2x6x3xi64>, %[[IN:[a-zA-Z0-9_]+]]: tensor<2x6xi64>, %[[OUT:[a-zA-Z0-9_]+]]: tensor<2x6xi64>)
// CHECK-NEXT:    %[[TA:.+]] = ml_program.global_load @atoms : tensor<10x16xf32>
// CHECK-NEXT:    %[[TI:.+]] = ml_program.global_load @in_deg : tensor<5x16xf32>
// CHECK-NEXT:    %[[TO:.+]] = ml_program.global_load @out_deg : tensor<5x16xf32>
// CHECK-NEXT:    %[[E:.+]] = gt.node_embedding %[[ATOMS]], %[[TA]] {sum_features} : (tensor<2x6x3xi64>, tensor<10x16xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    %[[D1:.+]] = gt.degree_embedding %[[E]], %[[IN]], %[[TI]] : (tensor<2x6x16xf32>, tensor<2x6xi64>, tensor<5x16xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    %[[D2:.+]] = gt.degree_embedding %[[D1]], %[[OUT]], %[[TO]] : (tensor<2x6x16xf32>, tensor<2x6xi64>, tensor<5x16xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    return %[[D2]] : tensor<2x6x16xf32>
func.func @graphormer_node_encoder(%atoms: tensor<2x6x3xi64>, %in: tensor<2x6xi64>, %out: tensor<2x6xi64>) -> tensor<2x6x16xf32> {
  %ta = ml_program.global_load @atoms : tensor<10x16xf32>
  %ti = ml_program.global_load @in_deg : tensor<5x16xf32>
  %to = ml_program.global_load @out_deg : tensor<5x16xf32>
  %s10 = tosa.const_shape {values = dense<[1, 10, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s5 = tosa.const_shape {values = dense<[1, 5, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s12 = tosa.const_shape {values = dense<[1, 12]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s36 = tosa.const_shape {values = dense<[1, 36]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %snd = tosa.const_shape {values = dense<[2, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %snfd = tosa.const_shape {values = dense<[2, 6, 3, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %ta, %s10 : (tensor<10x16xf32>, !tosa.shape<3>) -> tensor<1x10x16xf32>
  %1 = tosa.cast %atoms : (tensor<2x6x3xi64>) -> tensor<2x6x3xi32>
  %2 = tosa.reshape %1, %s36 : (tensor<2x6x3xi32>, !tosa.shape<2>) -> tensor<1x36xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x10x16xf32>, tensor<1x36xi32>) -> tensor<1x36x16xf32>
  %4 = tosa.reshape %3, %snfd : (tensor<1x36x16xf32>, !tosa.shape<4>) -> tensor<2x6x3x16xf32>
  %5 = tosa.reduce_sum %4 {axis = 2 : i32} : (tensor<2x6x3x16xf32>) -> tensor<2x6x1x16xf32>
  %6 = tosa.reshape %5, %snd : (tensor<2x6x1x16xf32>, !tosa.shape<3>) -> tensor<2x6x16xf32>
  %7 = tosa.reshape %ti, %s5 : (tensor<5x16xf32>, !tosa.shape<3>) -> tensor<1x5x16xf32>
  %8 = tosa.cast %in : (tensor<2x6xi64>) -> tensor<2x6xi32>
  %9 = tosa.reshape %8, %s12 : (tensor<2x6xi32>, !tosa.shape<2>) -> tensor<1x12xi32>
  %10 = tosa.gather %7, %9 : (tensor<1x5x16xf32>, tensor<1x12xi32>) -> tensor<1x12x16xf32>
  %11 = tosa.reshape %10, %snd : (tensor<1x12x16xf32>, !tosa.shape<3>) -> tensor<2x6x16xf32>
  %12 = tosa.add %6, %11 : (tensor<2x6x16xf32>, tensor<2x6x16xf32>) -> tensor<2x6x16xf32>
  %13 = tosa.reshape %to, %s5 : (tensor<5x16xf32>, !tosa.shape<3>) -> tensor<1x5x16xf32>
  %14 = tosa.cast %out : (tensor<2x6xi64>) -> tensor<2x6xi32>
  %15 = tosa.reshape %14, %s12 : (tensor<2x6xi32>, !tosa.shape<2>) -> tensor<1x12xi32>
  %16 = tosa.gather %13, %15 : (tensor<1x5x16xf32>, tensor<1x12xi32>) -> tensor<1x12x16xf32>
  %17 = tosa.reshape %16, %snd : (tensor<1x12x16xf32>, !tosa.shape<3>) -> tensor<2x6x16xf32>
  %18 = tosa.add %17, %12 : (tensor<2x6x16xf32>, tensor<2x6x16xf32>) -> tensor<2x6x16xf32>
  return %18 : tensor<2x6x16xf32>
}

// -----

ml_program.global private mutable @deg(dense<1.000000e+00> : tensor<5x16xf32>) : tensor<5x16xf32>

// Negative for the degree embedding: the lookup has a second user, so the
// add stays (the lookup itself is still raised).
// CHECK-LABEL: func.func @degree_embedding_shared_lookup
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x6x16xf32>, %[[DEG:[a-zA-Z0-9_]+]]: tensor<2x6xi64>)
// CHECK-NOT:     gt.degree_embedding
// CHECK-NEXT:    %[[T:.+]] = ml_program.global_load @deg : tensor<5x16xf32>
// CHECK-NEXT:    %[[E:.+]] = gt.node_embedding %[[DEG]], %[[T]] : (tensor<2x6xi64>, tensor<5x16xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    %[[Y:.+]] = tosa.add %[[X]], %[[E]] : (tensor<2x6x16xf32>, tensor<2x6x16xf32>) -> tensor<2x6x16xf32>
// CHECK-NEXT:    return %[[Y]], %[[E]] : tensor<2x6x16xf32>, tensor<2x6x16xf32>
func.func @degree_embedding_shared_lookup(%x: tensor<2x6x16xf32>, %degree: tensor<2x6xi64>) -> (tensor<2x6x16xf32>, tensor<2x6x16xf32>) {
  %table = ml_program.global_load @deg : tensor<5x16xf32>
  %s0 = tosa.const_shape {values = dense<[1, 5, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %table, %s0 : (tensor<5x16xf32>, !tosa.shape<3>) -> tensor<1x5x16xf32>
  %1 = tosa.cast %degree : (tensor<2x6xi64>) -> tensor<2x6xi32>
  %s1 = tosa.const_shape {values = dense<[1, 12]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %s1 : (tensor<2x6xi32>, !tosa.shape<2>) -> tensor<1x12xi32>
  %3 = tosa.gather %0, %2 : (tensor<1x5x16xf32>, tensor<1x12xi32>) -> tensor<1x12x16xf32>
  %s2 = tosa.const_shape {values = dense<[2, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %4 = tosa.reshape %3, %s2 : (tensor<1x12x16xf32>, !tosa.shape<3>) -> tensor<2x6x16xf32>
  %5 = tosa.add %x, %4 : (tensor<2x6x16xf32>, tensor<2x6x16xf32>) -> tensor<2x6x16xf32>
  return %5, %4 : tensor<2x6x16xf32>, tensor<2x6x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// (a) Batch-first heads ([B, H, S, dh] = [2, 3, 5, 4]), scores scaled by
// 1 / sqrt(dh) (a reciprocal), plus a [B, H, S, S] bias.
// CHECK-LABEL: func.func @attention_batch_first
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x3x5x5xf32>)
// CHECK-NEXT:    %[[A:.+]] = gt.attention %[[Q]], %[[K]], %[[V]] bias(%[[B]]) heads = 3 {scale = 5.000000e-01 : f32} : (tensor<2x5x12xf32>, tensor<2x5x12xf32>, tensor<2x5x12xf32>, tensor<2x3x5x5xf32>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    return %[[A]] : tensor<2x5x12xf32>
func.func @attention_batch_first(%q: tensor<2x5x12xf32>, %k: tensor<2x5x12xf32>, %v: tensor<2x5x12xf32>, %bias: tensor<2x3x5x5xf32>) -> tensor<2x5x12xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %split = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %2 = tosa.reshape %k, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x4x5xf32>
  %4 = tosa.reshape %v, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %1, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %sk = tosa.const_shape {values = dense<[6, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %7 = tosa.reshape %3, %sk : (tensor<2x3x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
  %8 = tosa.matmul %6, %7, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
  %c = "tosa.const"() <{values = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %ones = tosa.const_shape {values = dense<1> : tensor<4xindex>} : () -> !tosa.shape<4>
  %cr = tosa.reshape %c, %ones : (tensor<f32>, !tosa.shape<4>) -> tensor<1x1x1x1xf32>
  %rec = tosa.reciprocal %cr : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %10 = tosa.mul %9, %rec, %sh : (tensor<2x3x5x5xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<2x3x5x5xf32>
  %11 = tosa.add %10, %bias : (tensor<2x3x5x5xf32>, tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %e = tensor.empty() : tensor<2x3x5x5xf32>
  %12 = linalg.softmax dimension(3) ins(%11 : tensor<2x3x5x5xf32>) outs(%e : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
  %14 = tosa.reshape %5, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
  return %18 : tensor<2x5x12xf32>
}

// -----

// (b) The scale (0.25, not the default 0.5) applied to q before Q K^T, and a
// bias broadcast over the batch ([1, H, S, S]).
// CHECK-LABEL: func.func @attention_scaled_query
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<1x3x5x5xf32>)
// CHECK-NEXT:    %[[A:.+]] = gt.attention %[[Q]], %[[K]], %[[V]] bias(%[[B]]) heads = 3 {scale = 2.500000e-01 : f32} : (tensor<2x5x12xf32>, tensor<2x5x12xf32>, tensor<2x5x12xf32>, tensor<1x3x5x5xf32>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    return %[[A]] : tensor<2x5x12xf32>
func.func @attention_scaled_query(%q: tensor<2x5x12xf32>, %k: tensor<2x5x12xf32>, %v: tensor<2x5x12xf32>, %bias: tensor<1x3x5x5xf32>) -> tensor<2x5x12xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %split = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %quarter = "tosa.const"() <{values = dense<2.500000e-01> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %qs = tosa.mul %1, %quarter, %sh : (tensor<2x3x5x4xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<2x3x5x4xf32>
  %2 = tosa.reshape %k, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x4x5xf32>
  %4 = tosa.reshape %v, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %qs, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %sk = tosa.const_shape {values = dense<[6, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %7 = tosa.reshape %3, %sk : (tensor<2x3x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
  %8 = tosa.matmul %6, %7, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
  %11 = tosa.add %bias, %9 : (tensor<1x3x5x5xf32>, tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %e = tensor.empty() : tensor<2x3x5x5xf32>
  %12 = linalg.softmax dimension(3) ins(%11 : tensor<2x3x5x5xf32>) outs(%e : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
  %14 = tosa.reshape %5, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
  return %18 : tensor<2x5x12xf32>
}

// -----

// (c) nn.MultiheadAttention: seq-first [S, B, E] = [5, 2, 12] projections
// viewed as [S, B*H, dh] and transposed to [B*H, S, dh]; q scaled by
// 1 / sqrt(dh); a float mask [B*H, S, S]; rank-3 softmax; the output is
// transposed back and flattened to [S*B, E] for the output projection.
// CHECK-LABEL: func.func @attention_multihead_seq_first
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<5x2x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<5x2x12xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<5x2x12xf32>, %[[M:[a-zA-Z0-9_]+]]: tensor<6x5x5xf32>, %[[RES:[a-zA-Z0-9_]+]]: tensor<10x12xf32>)
// CHECK-NOT:     tosa.matmul
// CHECK-NOT:     linalg.softmax
// CHECK:         %[[MB:.+]] = tosa.reshape %[[M]], %{{.+}} : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[Q4:.+]] = tosa.reshape %[[Q]], %{{.+}} : (tensor<5x2x12xf32>, !tosa.shape<4>) -> tensor<5x2x3x4xf32>
// CHECK-NEXT:    %[[QT:.+]] = tosa.transpose %[[Q4]] {perms = array<i32: 1, 0, 2, 3>} : (tensor<5x2x3x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[QB:.+]] = tosa.reshape %[[QT]], %{{.+}} : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    %[[K4:.+]] = tosa.reshape %[[K]], %{{.+}} : (tensor<5x2x12xf32>, !tosa.shape<4>) -> tensor<5x2x3x4xf32>
// CHECK-NEXT:    %[[KT:.+]] = tosa.transpose %[[K4]] {perms = array<i32: 1, 0, 2, 3>} : (tensor<5x2x3x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[KB:.+]] = tosa.reshape %[[KT]], %{{.+}} : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    %[[V4:.+]] = tosa.reshape %[[V]], %{{.+}} : (tensor<5x2x12xf32>, !tosa.shape<4>) -> tensor<5x2x3x4xf32>
// CHECK-NEXT:    %[[VT:.+]] = tosa.transpose %[[V4]] {perms = array<i32: 1, 0, 2, 3>} : (tensor<5x2x3x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[VB:.+]] = tosa.reshape %[[VT]], %{{.+}} : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    %[[A:.+]] = gt.attention %[[QB]], %[[KB]], %[[VB]] bias(%[[MB]]) heads = 3 {scale = 5.000000e-01 : f32} : (tensor<2x5x12xf32>, tensor<2x5x12xf32>, tensor<2x5x12xf32>, tensor<2x3x5x5xf32>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    %[[A4:.+]] = tosa.reshape %[[A]], %{{.+}} : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[AT:.+]] = tosa.transpose %[[A4]] {perms = array<i32: 1, 0, 2, 3>} : (tensor<2x5x3x4xf32>) -> tensor<5x2x3x4xf32>
// CHECK-NEXT:    %[[O:.+]] = tosa.reshape %[[AT]], %{{.+}} : (tensor<5x2x3x4xf32>, !tosa.shape<2>) -> tensor<10x12xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.add %[[O]], %[[RES]] : (tensor<10x12xf32>, tensor<10x12xf32>) -> tensor<10x12xf32>
// CHECK-NEXT:    return %[[R]] : tensor<10x12xf32>
func.func @attention_multihead_seq_first(%q: tensor<5x2x12xf32>, %k: tensor<5x2x12xf32>, %v: tensor<5x2x12xf32>, %mask: tensor<6x5x5xf32>, %res: tensor<10x12xf32>) -> tensor<10x12xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %heads = tosa.const_shape {values = dense<[5, 6, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %q, %heads : (tensor<5x2x12xf32>, !tosa.shape<3>) -> tensor<5x6x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 1, 0, 2>} : (tensor<5x6x4xf32>) -> tensor<6x5x4xf32>
  %2 = tosa.reshape %k, %heads : (tensor<5x2x12xf32>, !tosa.shape<3>) -> tensor<5x6x4xf32>
  %3 = tosa.reshape %v, %heads : (tensor<5x2x12xf32>, !tosa.shape<3>) -> tensor<5x6x4xf32>
  %4 = tosa.transpose %3 {perms = array<i32: 1, 0, 2>} : (tensor<5x6x4xf32>) -> tensor<6x5x4xf32>
  %c = "tosa.const"() <{values = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %ones = tosa.const_shape {values = dense<1> : tensor<3xindex>} : () -> !tosa.shape<3>
  %cr = tosa.reshape %c, %ones : (tensor<f32>, !tosa.shape<3>) -> tensor<1x1x1xf32>
  %rec = tosa.reciprocal %cr : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %5 = tosa.mul %1, %rec, %sh : (tensor<6x5x4xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x5x4xf32>
  %6 = tosa.transpose %2 {perms = array<i32: 1, 2, 0>} : (tensor<5x6x4xf32>) -> tensor<6x4x5xf32>
  %7 = tosa.matmul %5, %6, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %8 = tosa.add %7, %mask : (tensor<6x5x5xf32>, tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %e = tensor.empty() : tensor<6x5x5xf32>
  %9 = linalg.softmax dimension(2) ins(%8 : tensor<6x5x5xf32>) outs(%e : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %10 = tosa.matmul %9, %4, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %11 = tosa.transpose %10 {perms = array<i32: 1, 0, 2>} : (tensor<6x5x4xf32>) -> tensor<5x6x4xf32>
  %flat = tosa.const_shape {values = dense<[10, 12]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %12 = tosa.reshape %11, %flat : (tensor<5x6x4xf32>, !tosa.shape<2>) -> tensor<10x12xf32>
  %13 = tosa.add %12, %res : (tensor<10x12xf32>, tensor<10x12xf32>) -> tensor<10x12xf32>
  return %13 : tensor<10x12xf32>
}

// -----

// (d) No bias and no scaling: scale = 1.
// CHECK-LABEL: func.func @attention_no_bias
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>)
// CHECK-NEXT:    %[[A:.+]] = gt.attention %[[Q]], %[[K]], %[[V]] heads = 3 {scale = 1.000000e+00 : f32} : (tensor<2x5x12xf32>, tensor<2x5x12xf32>, tensor<2x5x12xf32>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    return %[[A]] : tensor<2x5x12xf32>
func.func @attention_no_bias(%q: tensor<2x5x12xf32>, %k: tensor<2x5x12xf32>, %v: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %split = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %2 = tosa.reshape %k, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x4x5xf32>
  %4 = tosa.reshape %v, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %1, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %sk = tosa.const_shape {values = dense<[6, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %7 = tosa.reshape %3, %sk : (tensor<2x3x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
  %8 = tosa.matmul %6, %7, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
  %e = tensor.empty() : tensor<2x3x5x5xf32>
  %12 = linalg.softmax dimension(3) ins(%9 : tensor<2x3x5x5xf32>) outs(%e : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
  %14 = tosa.reshape %5, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
  return %18 : tensor<2x5x12xf32>
}

// -----

// (e) Cross attention: 5 queries, 7 keys, V with its own head size (dv = 2).
// CHECK-LABEL: func.func @attention_cross
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x7x12xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x7x6xf32>)
// CHECK-NEXT:    %[[A:.+]] = gt.attention %[[Q]], %[[K]], %[[V]] heads = 3 {scale = 1.000000e+00 : f32} : (tensor<2x5x12xf32>, tensor<2x7x12xf32>, tensor<2x7x6xf32>) -> tensor<2x5x6xf32>
// CHECK-NEXT:    return %[[A]] : tensor<2x5x6xf32>
func.func @attention_cross(%q: tensor<2x5x12xf32>, %k: tensor<2x7x12xf32>, %v: tensor<2x7x6xf32>) -> tensor<2x5x6xf32> {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %sq4 = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %sk4 = tosa.const_shape {values = dense<[2, 7, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %sv4 = tosa.const_shape {values = dense<[2, 7, 3, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %sq4 : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %2 = tosa.reshape %k, %sk4 : (tensor<2x7x12xf32>, !tosa.shape<4>) -> tensor<2x7x3x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x7x3x4xf32>) -> tensor<2x3x4x7xf32>
  %4 = tosa.reshape %v, %sv4 : (tensor<2x7x6xf32>, !tosa.shape<4>) -> tensor<2x7x3x2xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x7x3x2xf32>) -> tensor<2x3x7x2xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %1, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %sk = tosa.const_shape {values = dense<[6, 4, 7]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %7 = tosa.reshape %3, %sk : (tensor<2x3x4x7xf32>, !tosa.shape<3>) -> tensor<6x4x7xf32>
  %8 = tosa.matmul %6, %7, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x7xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x7xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 7]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x7xf32>, !tosa.shape<4>) -> tensor<2x3x5x7xf32>
  %e = tensor.empty() : tensor<2x3x5x7xf32>
  %12 = linalg.softmax dimension(3) ins(%9 : tensor<2x3x5x7xf32>) outs(%e : tensor<2x3x5x7xf32>) -> tensor<2x3x5x7xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 7]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x7xf32>, !tosa.shape<3>) -> tensor<6x5x7xf32>
  %sv = tosa.const_shape {values = dense<[6, 7, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %14 = tosa.reshape %5, %sv : (tensor<2x3x7x2xf32>, !tosa.shape<3>) -> tensor<6x7x2xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x7xf32>, tensor<6x7x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x2xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x2xf32>, !tosa.shape<4>) -> tensor<2x3x5x2xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x2xf32>) -> tensor<2x5x3x2xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x2xf32>, !tosa.shape<3>) -> tensor<2x5x6xf32>
  return %18 : tensor<2x5x6xf32>
}

// -----

// (f) Q, K^T and V given directly as [G, S, d] tensors, without a head
// split: consistent as G sequences of one head each; K^T is transposed back.
// CHECK-LABEL: func.func @attention_no_head_split
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<6x5x4xf32>, %[[KT:[a-zA-Z0-9_]+]]: tensor<6x4x5xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<6x5x4xf32>)
// CHECK-NEXT:    %[[K:.+]] = tosa.transpose %[[KT]] {perms = array<i32: 0, 2, 1>} : (tensor<6x4x5xf32>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[A:.+]] = gt.attention %[[Q]], %[[K]], %[[V]] heads = 1 {scale = 1.000000e+00 : f32} : (tensor<6x5x4xf32>, tensor<6x5x4xf32>, tensor<6x5x4xf32>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    return %[[A]] : tensor<6x5x4xf32>
func.func @attention_no_head_split(%q: tensor<6x5x4xf32>, %kt: tensor<6x4x5xf32>, %v: tensor<6x5x4xf32>) -> tensor<6x5x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %e = tensor.empty() : tensor<6x5x5xf32>
  %1 = linalg.softmax dimension(2) ins(%0 : tensor<6x5x5xf32>) outs(%e : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %2 = tosa.matmul %1, %v, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  return %2 : tensor<6x5x4xf32>
}

// -----

// Negative: the softmax normalizes over the queries (dim 2), not the keys.
// CHECK-LABEL: func.func @attention_softmax_not_last_dim
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>)
// CHECK-NOT:     gt.
// CHECK:         %[[S:.+]] = tosa.matmul %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[Z:.+]] = tosa.reshape %[[S]], %{{.+}} : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P:.+]] = linalg.softmax dimension(2) ins(%[[Z]] : tensor<2x3x5x5xf32>) outs(%[[E]] : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P3:.+]] = tosa.reshape %[[P]], %{{.+}} : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[V3:.+]] = tosa.reshape %{{.+}}, %{{.+}} : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O:.+]] = tosa.matmul %[[P3]], %[[V3]], %{{.+}}, %{{.+}} : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O4:.+]] = tosa.reshape %[[O]], %{{.+}} : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
// CHECK-NEXT:    %[[OT:.+]] = tosa.transpose %[[O4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.reshape %[[OT]], %{{.+}} : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x5x12xf32>
func.func @attention_softmax_not_last_dim(%q: tensor<2x5x12xf32>, %k: tensor<2x5x12xf32>, %v: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %split = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %2 = tosa.reshape %k, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x4x5xf32>
  %4 = tosa.reshape %v, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %1, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %sk = tosa.const_shape {values = dense<[6, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %7 = tosa.reshape %3, %sk : (tensor<2x3x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
  %8 = tosa.matmul %6, %7, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
  %e = tensor.empty() : tensor<2x3x5x5xf32>
  %12 = linalg.softmax dimension(2) ins(%9 : tensor<2x3x5x5xf32>) outs(%e : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
  %14 = tosa.reshape %5, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
  return %18 : tensor<2x5x12xf32>
}

// -----

// Negative: the scores feed the softmax and are also returned.
// CHECK-LABEL: func.func @attention_scores_used_twice
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>)
// CHECK-NOT:     gt.
// CHECK:         %[[S:.+]] = tosa.matmul %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[Z:.+]] = tosa.reshape %[[S]], %{{.+}} : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P:.+]] = linalg.softmax dimension(3) ins(%[[Z]] : tensor<2x3x5x5xf32>) outs(%[[E]] : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P3:.+]] = tosa.reshape %[[P]], %{{.+}} : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[V3:.+]] = tosa.reshape %{{.+}}, %{{.+}} : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O:.+]] = tosa.matmul %[[P3]], %[[V3]], %{{.+}}, %{{.+}} : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O4:.+]] = tosa.reshape %[[O]], %{{.+}} : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
// CHECK-NEXT:    %[[OT:.+]] = tosa.transpose %[[O4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.reshape %[[OT]], %{{.+}} : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    return %[[R]], %[[Z]] : tensor<2x5x12xf32>, tensor<2x3x5x5xf32>
func.func @attention_scores_used_twice(%q: tensor<2x5x12xf32>, %k: tensor<2x5x12xf32>, %v: tensor<2x5x12xf32>) -> (tensor<2x5x12xf32>, tensor<2x3x5x5xf32>) {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %split = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %2 = tosa.reshape %k, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x4x5xf32>
  %4 = tosa.reshape %v, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %1, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %sk = tosa.const_shape {values = dense<[6, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %7 = tosa.reshape %3, %sk : (tensor<2x3x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
  %8 = tosa.matmul %6, %7, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
  %e = tensor.empty() : tensor<2x3x5x5xf32>
  %12 = linalg.softmax dimension(3) ins(%9 : tensor<2x3x5x5xf32>) outs(%e : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
  %14 = tosa.reshape %5, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
  return %18, %9 : tensor<2x5x12xf32>, tensor<2x3x5x5xf32>
}

// -----

// Negative: the attention probabilities are also returned.
// CHECK-LABEL: func.func @attention_probs_used_twice
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>)
// CHECK-NOT:     gt.
// CHECK:         %[[S:.+]] = tosa.matmul %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[Z:.+]] = tosa.reshape %[[S]], %{{.+}} : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P:.+]] = linalg.softmax dimension(3) ins(%[[Z]] : tensor<2x3x5x5xf32>) outs(%[[E]] : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P3:.+]] = tosa.reshape %[[P]], %{{.+}} : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[V3:.+]] = tosa.reshape %{{.+}}, %{{.+}} : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O:.+]] = tosa.matmul %[[P3]], %[[V3]], %{{.+}}, %{{.+}} : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O4:.+]] = tosa.reshape %[[O]], %{{.+}} : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
// CHECK-NEXT:    %[[OT:.+]] = tosa.transpose %[[O4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.reshape %[[OT]], %{{.+}} : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    return %[[R]], %[[P]] : tensor<2x5x12xf32>, tensor<2x3x5x5xf32>
func.func @attention_probs_used_twice(%q: tensor<2x5x12xf32>, %k: tensor<2x5x12xf32>, %v: tensor<2x5x12xf32>) -> (tensor<2x5x12xf32>, tensor<2x3x5x5xf32>) {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %split = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %2 = tosa.reshape %k, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x4x5xf32>
  %4 = tosa.reshape %v, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %1, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %sk = tosa.const_shape {values = dense<[6, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %7 = tosa.reshape %3, %sk : (tensor<2x3x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
  %8 = tosa.matmul %6, %7, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
  %e = tensor.empty() : tensor<2x3x5x5xf32>
  %12 = linalg.softmax dimension(3) ins(%9 : tensor<2x3x5x5xf32>) outs(%e : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
  %14 = tosa.reshape %5, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
  return %18, %12 : tensor<2x5x12xf32>, tensor<2x3x5x5xf32>
}

// -----

// Negative: K is split into 2 heads of a batch of 3 (from [3, 5, 8]), Q into
// 3 heads of a batch of 2: the [6, ...] groups do not pair up.
// CHECK-LABEL: func.func @attention_key_other_heads
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<3x5x8xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>)
// CHECK-NOT:     gt.
// CHECK:         %[[K4:.+]] = tosa.reshape %[[K]], %{{.+}} : (tensor<3x5x8xf32>, !tosa.shape<4>) -> tensor<3x5x2x4xf32>
// CHECK-NEXT:    %[[KT:.+]] = tosa.transpose %[[K4]] {perms = array<i32: 0, 2, 3, 1>} : (tensor<3x5x2x4xf32>) -> tensor<3x2x4x5xf32>
// CHECK-NOT:     gt.
// CHECK:         %[[K3:.+]] = tosa.reshape %[[KT]], %{{.+}} : (tensor<3x2x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
// CHECK-NOT:     gt.
// CHECK:         %[[S:.+]] = tosa.matmul %{{.+}}, %[[K3]], %{{.+}}, %{{.+}} : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[Z:.+]] = tosa.reshape %[[S]], %{{.+}} : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P:.+]] = linalg.softmax dimension(3) ins(%[[Z]] : tensor<2x3x5x5xf32>) outs(%[[E]] : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P3:.+]] = tosa.reshape %[[P]], %{{.+}} : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[V3:.+]] = tosa.reshape %{{.+}}, %{{.+}} : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O:.+]] = tosa.matmul %[[P3]], %[[V3]], %{{.+}}, %{{.+}} : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O4:.+]] = tosa.reshape %[[O]], %{{.+}} : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
// CHECK-NEXT:    %[[OT:.+]] = tosa.transpose %[[O4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.reshape %[[OT]], %{{.+}} : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x5x12xf32>
func.func @attention_key_other_heads(%q: tensor<2x5x12xf32>, %k: tensor<3x5x8xf32>, %v: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %split = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %ksplit = tosa.const_shape {values = dense<[3, 5, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %2 = tosa.reshape %k, %ksplit : (tensor<3x5x8xf32>, !tosa.shape<4>) -> tensor<3x5x2x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 0, 2, 3, 1>} : (tensor<3x5x2x4xf32>) -> tensor<3x2x4x5xf32>
  %4 = tosa.reshape %v, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %1, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %sk = tosa.const_shape {values = dense<[6, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %7 = tosa.reshape %3, %sk : (tensor<3x2x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
  %8 = tosa.matmul %6, %7, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
  %e = tensor.empty() : tensor<2x3x5x5xf32>
  %12 = linalg.softmax dimension(3) ins(%9 : tensor<2x3x5x5xf32>) outs(%e : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
  %14 = tosa.reshape %5, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
  return %18 : tensor<2x5x12xf32>
}

// -----

// Negative: K's group dim is ordered (head, batch) while Q's is (batch,
// head): head h of sequence b would meet keys of another sequence.
// CHECK-LABEL: func.func @attention_key_heads_major
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>)
// CHECK-NOT:     gt.
// CHECK:         %[[K4:.+]] = tosa.reshape %[[K]], %{{.+}} : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[KT:.+]] = tosa.transpose %[[K4]] {perms = array<i32: 2, 0, 3, 1>} : (tensor<2x5x3x4xf32>) -> tensor<3x2x4x5xf32>
// CHECK-NOT:     gt.
// CHECK:         %[[K3:.+]] = tosa.reshape %[[KT]], %{{.+}} : (tensor<3x2x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
// CHECK-NOT:     gt.
// CHECK:         %[[S:.+]] = tosa.matmul %{{.+}}, %[[K3]], %{{.+}}, %{{.+}} : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[Z:.+]] = tosa.reshape %[[S]], %{{.+}} : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P:.+]] = linalg.softmax dimension(3) ins(%[[Z]] : tensor<2x3x5x5xf32>) outs(%[[E]] : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P3:.+]] = tosa.reshape %[[P]], %{{.+}} : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[V3:.+]] = tosa.reshape %{{.+}}, %{{.+}} : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O:.+]] = tosa.matmul %[[P3]], %[[V3]], %{{.+}}, %{{.+}} : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O4:.+]] = tosa.reshape %[[O]], %{{.+}} : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
// CHECK-NEXT:    %[[OT:.+]] = tosa.transpose %[[O4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.reshape %[[OT]], %{{.+}} : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x5x12xf32>
func.func @attention_key_heads_major(%q: tensor<2x5x12xf32>, %k: tensor<2x5x12xf32>, %v: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %split = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %2 = tosa.reshape %k, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 2, 0, 3, 1>} : (tensor<2x5x3x4xf32>) -> tensor<3x2x4x5xf32>
  %4 = tosa.reshape %v, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %1, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %sk = tosa.const_shape {values = dense<[6, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %7 = tosa.reshape %3, %sk : (tensor<3x2x4x5xf32>, !tosa.shape<3>) -> tensor<6x4x5xf32>
  %8 = tosa.matmul %6, %7, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
  %e = tensor.empty() : tensor<2x3x5x5xf32>
  %12 = linalg.softmax dimension(3) ins(%9 : tensor<2x3x5x5xf32>) outs(%e : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
  %14 = tosa.reshape %5, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
  return %18 : tensor<2x5x12xf32>
}

// -----

// Negative: Q is split into heads but K^T is a plain [6, 4, 5] tensor: its
// group dim cannot be matched to Q's (batch, head) pairs.
// CHECK-LABEL: func.func @attention_key_without_head_split
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>, %[[KT:[a-zA-Z0-9_]+]]: tensor<6x4x5xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x5x12xf32>)
// CHECK-NOT:     gt.
// CHECK:         %[[S:.+]] = tosa.matmul %{{.+}}, %[[KT]], %{{.+}}, %{{.+}} : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[Z:.+]] = tosa.reshape %[[S]], %{{.+}} : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P:.+]] = linalg.softmax dimension(3) ins(%[[Z]] : tensor<2x3x5x5xf32>) outs(%[[E]] : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %[[P3:.+]] = tosa.reshape %[[P]], %{{.+}} : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
// CHECK-NEXT:    %[[V3:.+]] = tosa.reshape %{{.+}}, %{{.+}} : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O:.+]] = tosa.matmul %[[P3]], %[[V3]], %{{.+}}, %{{.+}} : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
// CHECK-NEXT:    %[[O4:.+]] = tosa.reshape %[[O]], %{{.+}} : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
// CHECK-NEXT:    %[[OT:.+]] = tosa.transpose %[[O4]] {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[R:.+]] = tosa.reshape %[[OT]], %{{.+}} : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x5x12xf32>
func.func @attention_key_without_head_split(%q: tensor<2x5x12xf32>, %kt: tensor<6x4x5xf32>, %v: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %zp = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %split = tosa.const_shape {values = dense<[2, 5, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %q, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %4 = tosa.reshape %v, %split : (tensor<2x5x12xf32>, !tosa.shape<4>) -> tensor<2x5x3x4xf32>
  %5 = tosa.transpose %4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %sq = tosa.const_shape {values = dense<[6, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %6 = tosa.reshape %1, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %8 = tosa.matmul %6, %kt, %zp, %zp : (tensor<6x5x4xf32>, tensor<6x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x5xf32>
  %sz = tosa.const_shape {values = dense<[2, 3, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %9 = tosa.reshape %8, %sz : (tensor<6x5x5xf32>, !tosa.shape<4>) -> tensor<2x3x5x5xf32>
  %e = tensor.empty() : tensor<2x3x5x5xf32>
  %12 = linalg.softmax dimension(3) ins(%9 : tensor<2x3x5x5xf32>) outs(%e : tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %sp = tosa.const_shape {values = dense<[6, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %13 = tosa.reshape %12, %sp : (tensor<2x3x5x5xf32>, !tosa.shape<3>) -> tensor<6x5x5xf32>
  %14 = tosa.reshape %5, %sq : (tensor<2x3x5x4xf32>, !tosa.shape<3>) -> tensor<6x5x4xf32>
  %15 = tosa.matmul %13, %14, %zp, %zp : (tensor<6x5x5xf32>, tensor<6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x5x4xf32>
  %so = tosa.const_shape {values = dense<[2, 3, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %16 = tosa.reshape %15, %so : (tensor<6x5x4xf32>, !tosa.shape<4>) -> tensor<2x3x5x4xf32>
  %17 = tosa.transpose %16 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %sm = tosa.const_shape {values = dense<[2, 5, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %18 = tosa.reshape %17, %sm : (tensor<2x5x3x4xf32>, !tosa.shape<3>) -> tensor<2x5x12xf32>
  return %18 : tensor<2x5x12xf32>
}
