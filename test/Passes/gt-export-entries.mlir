// RUN: megagraph-opt %s --gt-export-entries | FileCheck %s

// @main becomes the runtime's C entry @megagraph_model without gt.name;
// stage entries keep their names and lose their argument attributes.

// CHECK-LABEL: func.func @megagraph_model(
// CHECK-SAME: %{{.*}}: tensor<2xf32>) -> tensor<2xf32>
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @main(%x: tensor<2xf32> {gt.name = "x"}) -> (tensor<2xf32> {gt.name = "y"}) {
  return %x : tensor<2xf32>
}

// CHECK-LABEL: func.func @stage(
// CHECK-SAME: %{{.*}}: tensor<2xf32>) -> tensor<2xf32>
// CHECK-SAME: gt.pipeline_entry = "s0.fwd"
// CHECK-SAME: llvm.emit_c_interface
func.func @stage(%x: tensor<2xf32> {gt.name = "act0"}) -> (tensor<2xf32> {gt.name = "act0"})
    attributes {gt.pipeline_entry = "s0.fwd"} {
  return %x : tensor<2xf32>
}

// CHECK-LABEL: func.func @caller
// CHECK: call @megagraph_model
func.func @caller(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @main(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
