// RUN: megagraph-opt %s --gt-autodiff -split-input-file | FileCheck %s

// Gradient rules of the linalg ops the ONNX importer creates (external
// models of GradientOpInterface). Their numerics are checked against
// PyTorch autograd by the `more_ops` model of test/E2E/gradients.test.

ml_program.global private mutable @w(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// linalg.softmax: dx = y (dy - sum(dy y)) along the softmax dimension.
// CHECK-LABEL: func.func @main_grad
// CHECK:         %[[Y:.*]] = linalg.softmax dimension(1)
// CHECK:         gt.cross_entropy
// CHECK:         %[[DYY:.*]] = tosa.mul %[[DY:.*]], %[[Y]]
// CHECK:         %[[DOT:.*]] = tosa.reduce_sum %[[DYY]] {axis = 1 : i32}
// CHECK:         %[[D:.*]] = tosa.sub %[[DY]], %[[DOT]]
// CHECK:         %[[G:.*]] = tosa.mul %[[Y]], %[[D]]
// CHECK:         return {{.*}}, %[[G]] :
func.func @main() -> tensor<4x3xf32> {
  %w = ml_program.global_load @w : tensor<4x3xf32>
  %init = tensor.empty() : tensor<4x3xf32>
  %y = linalg.softmax dimension(1) ins(%w : tensor<4x3xf32>) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @a(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.25> : tensor<1x3xf32>) : tensor<1x3xf32> {gt.param}

// An elementwise linalg.generic (ONNX Mod, fmod = 1): one generic per
// float input yields dy times the body's derivative, d fmod(a, b)/da = 1 and
// d/db = -trunc(a / b); b's gradient is summed over its broadcast rows.
// CHECK-LABEL: func.func @main_grad
// CHECK:         gt.cross_entropy
// CHECK:         %[[DA:.*]] = linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}}, %[[DY:.*]] : tensor<4x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>)
// CHECK:           %[[R:.*]] = arith.remf
// CHECK:           %[[T:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:           linalg.yield %[[T]]
// CHECK:         %[[DB:.*]] = linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}}, %[[DY]] : tensor<4x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>)
// CHECK:           %[[Q:.*]] = arith.divf
// CHECK:           %[[F:.*]] = arith.remf %[[Q]]
// CHECK:           %[[TR:.*]] = arith.subf %[[Q]], %[[F]]
// CHECK:           arith.negf
// CHECK:         %[[DBS:.*]] = tosa.reduce_sum %[[DB]] {axis = 0 : i32} : (tensor<4x3xf32>) -> tensor<1x3xf32>
// CHECK:         return {{.*}}, %[[DA]], %[[DBS]] :
func.func @main() -> tensor<4x3xf32> {
  %a = ml_program.global_load @a : tensor<4x3xf32>
  %b = ml_program.global_load @b : tensor<1x3xf32>
  %init = tensor.empty() : tensor<4x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x3xf32>, tensor<1x3xf32>) outs(%init : tensor<4x3xf32>) {
  ^bb0(%x: f32, %z: f32, %o: f32):
    %r = arith.remf %x, %z : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

ml_program.global private mutable @d(dense<0.5> : tensor<1x4x3xf32>) : tensor<1x4x3xf32> {gt.param}
ml_program.global private mutable @u(dense<0.25> : tensor<1x2x3xf32>) : tensor<1x2x3xf32> {gt.param}

// The importer's row scatter with runtime rows (ScatterND, reduction none):
// the updates get dy gathered at their rows, for the last update of each
// row only; the data gets dy where no update wrote.
// CHECK-LABEL: func.func @main_grad
// CHECK-SAME:      %[[ROWS:[^:]*]]: tensor<1x2xi32>
// CHECK:         gt.cross_entropy
// CHECK:         %[[DY:.*]] = tosa.reshape %{{.*}} -> tensor<1x4x3xf32>
// CHECK:         %[[GATH:.*]] = tosa.gather %[[DY]], %[[ROWS]]
// CHECK:         %[[WR:.*]] = tosa.greater
// CHECK:         %[[DD:.*]] = tosa.select %[[WR]], %{{.*}}, %[[DY]]
// CHECK:         %[[KEPT:.*]] = tosa.equal %{{.*}}, %{{.*}} : (tensor<1x2x1xf32>, tensor<1x1x1xf32>) -> tensor<1x2x1xi1>
// CHECK:         %[[DU:.*]] = tosa.select %[[KEPT]], %[[GATH]], %{{.*}}
// CHECK:         return {{.*}}, %[[DD]], %[[DU]] :
func.func @main(%rows: tensor<1x2xi32>) -> tensor<1x4x3xf32> {
  %d = ml_program.global_load @d : tensor<1x4x3xf32>
  %u = ml_program.global_load @u : tensor<1x2x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%rows, %u : tensor<1x2xi32>, tensor<1x2x3xf32>) outs(%d : tensor<1x4x3xf32>) {
  ^bb0(%r: i32, %v: f32, %acc: f32):
    %ri = arith.index_cast %r : i32 to index
    %k = linalg.index 1 : index
    %is = arith.cmpi eq, %ri, %k : index
    %s = arith.select %is, %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

ml_program.global private mutable @a(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}
ml_program.global private mutable @b(dense<0.5> : tensor<4x3xf32>) : tensor<4x3xf32> {gt.param}

// arith.maximumf in an elementwise body: the tangent is that of the larger
// operand, the mean of both where they tie (torch.maximum).
// CHECK-LABEL: func.func @main_grad
// CHECK:         gt.cross_entropy
// CHECK:         linalg.generic
// CHECK:           %[[GT:.*]] = arith.cmpf ogt, %[[X:.*]], %[[Z:.*]] : f32
// CHECK:           %[[TIE:.*]] = arith.cmpf oeq, %[[X]], %[[Z]] : f32
// CHECK:           %[[SUM:.*]] = arith.addf
// CHECK:           %[[MEAN:.*]] = arith.mulf %[[SUM]], %{{.*}} : f32
// CHECK:           %[[PICK:.*]] = arith.select %[[GT]]
// CHECK:           arith.select %[[TIE]], %[[MEAN]], %[[PICK]] : f32
// CHECK:         return
func.func @main() -> tensor<4x3xf32> {
  %a = ml_program.global_load @a : tensor<4x3xf32>
  %b = ml_program.global_load @b : tensor<4x3xf32>
  %init = tensor.empty() : tensor<4x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x3xf32>, tensor<4x3xf32>) outs(%init : tensor<4x3xf32>) {
  ^bb0(%x: f32, %z: f32, %o: f32):
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
