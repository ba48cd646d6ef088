// A two-output model whose input has no driver convention (node_attr):
// class logits [2, 4, 5] and a regression output pred [2, 4, 1].

ml_program.global private mutable @w(dense<0.25> : tensor<2x3x5xf32>) : tensor<2x3x5xf32> {gt.param}
ml_program.global private mutable @v(dense<0.5> : tensor<2x3x1xf32>) : tensor<2x3x1xf32> {gt.param}

func.func @main(%x: tensor<2x4x3xf32> {gt.name = "node_attr"}) -> (tensor<2x4x5xf32> {gt.name = "logits"}, tensor<2x4x1xf32> {gt.name = "pred"}) {
  %w = ml_program.global_load @w : tensor<2x3x5xf32>
  %v = ml_program.global_load @v : tensor<2x3x1xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %x, %w, %zp, %zp : (tensor<2x4x3xf32>, tensor<2x3x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x5xf32>
  %p = tosa.matmul %x, %v, %zp, %zp : (tensor<2x4x3xf32>, tensor<2x3x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x1xf32>
  return %y, %p : tensor<2x4x5xf32>, tensor<2x4x1xf32>
}
