// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adamw lr=0.01 weight-decay=0.1 pack-below=16" --cse | FileCheck %s
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=adamw lr=0.01 weight-decay=0.1 pack-below=0" | FileCheck %s --check-prefix=OFF
// RUN: megagraph-opt %s --gt-autodiff --gt-optimizer="optimizer=sgd lr=0.1 momentum=0.9 pack-below=16" | FileCheck %s --check-prefix=SGD

// gt-optimizer's packing: the parameters of fewer than pack-below elements
// (@big, 9, and @b, 3; not @w, 24) are updated as one flat tensor of 12
// elements: their weights, gradients and states are flattened and
// concatenated, the recipe runs once, and every result is sliced back and
// stored into its own global (@b at offset 9). Each state stays one global
// per parameter. Each update stores its new values right after it (@w's
// before the group is packed), so that they die there; the step counter,
// which every update reads, is stored last.
// CHECK-DAG:   ml_program.global private mutable @b.adam_m(dense<0.000000e+00> : tensor<3xf32>) : tensor<3xf32> {gt.optimizer_state}
// CHECK-DAG:   ml_program.global private mutable @big.adam_v(dense<0.000000e+00> : tensor<3x3xf32>) : tensor<3x3xf32> {gt.optimizer_state}
// CHECK-LABEL: func.func @main
// CHECK-DAG:   %[[C3:.+]] = tosa.const_shape {values = dense<3> : tensor<1xindex>}
// CHECK-DAG:   ml_program.global_store @w.adam_m =
// CHECK-NEXT:  ml_program.global_store @w.adam_v =
// CHECK-NEXT:  ml_program.global_store @w =
// CHECK:       %[[C9:.+]] = tosa.const_shape {values = dense<9> : tensor<1xindex>}
// CHECK-COUNT-4: tosa.concat {{.*}} : (tensor<9xf32>, tensor<3xf32>) -> tensor<12xf32>
// CHECK-NOT:   tosa.concat
// CHECK:       %[[NEW:.+]] = tosa.sub {{.*}} -> tensor<12xf32>
// CHECK-NOT:   tosa.sub
// CHECK:       %[[B:.+]] = tosa.slice %[[NEW]], %[[C9]], %[[C3]] : (tensor<12xf32>, !tosa.shape<1>, !tosa.shape<1>) -> tensor<3xf32>
// CHECK-NEXT:  %[[BR:.+]] = tosa.reshape %[[B]]
// CHECK-NEXT:  ml_program.global_store @big.adam_m =
// CHECK-NEXT:  ml_program.global_store @big.adam_v =
// CHECK-NEXT:  ml_program.global_store @big =
// CHECK-NEXT:  ml_program.global_store @b.adam_m =
// CHECK-NEXT:  ml_program.global_store @b.adam_v =
// CHECK-NEXT:  ml_program.global_store @b = %[[BR]]
// CHECK-NEXT:  ml_program.global_store @gt.step =
// CHECK-NEXT:  return
// OFF-LABEL:   func.func @main
// OFF-NOT:     tosa.concat
// OFF-NOT:     tosa.slice
// OFF:         ml_program.global_store @b =
// SGD-LABEL:   func.func @main
// SGD-COUNT-3: tosa.concat {{.*}} -> tensor<12xf32>
// SGD-NOT:     tosa.concat
// SGD:         ml_program.global_store @big.momentum_buffer =
// SGD-NEXT:    ml_program.global_store @big =
// SGD-NEXT:    ml_program.global_store @b.momentum_buffer =
// SGD-NEXT:    ml_program.global_store @b =
// SGD-NEXT:    return

ml_program.global private mutable @w(dense<0.5> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @big(dense<0.2> : tensor<3x3xf32>) : tensor<3x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.1> : tensor<3xf32>) : tensor<3xf32> {gt.param}

func.func @main(%x: tensor<4x8xf32> {gt.name = "x"}) -> (tensor<4x3xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<8x3xf32>
  %y = gt.linear %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %big = ml_program.global_load @big : tensor<3x3xf32>
  %b = ml_program.global_load @b : tensor<3xf32>
  %z = gt.linear %y, %big, %b : (tensor<4x3xf32>, tensor<3x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %z : tensor<4x3xf32>
}
