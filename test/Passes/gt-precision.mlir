// RUN: megagraph-opt %s --gt-precision="precision=bf16" | FileCheck %s
// RUN: megagraph-opt %s --gt-precision="precision=fp32" | FileCheck %s --check-prefix=FP32
// RUN: megagraph-opt %s --gt-precision | FileCheck %s --check-prefix=FP32

// bf16: the GEMM and attention calls (declarations and calls) go to their
// BF16 kernels with the same operands; everything else (layer norm, the
// loss, the update) is untouched. fp32 (the default) changes nothing.

// CHECK-DAG: func.func private @mgrt_matmul_bf16_f32(
// CHECK-DAG: func.func private @mgrt_attention_lse_bf16_f32(
// CHECK-DAG: func.func private @mgrt_attention_bwd_lse_bf16_f32(
// CHECK-DAG: func.func private @mgrt_layer_norm_f32(
// CHECK-LABEL: func.func @step(
// CHECK: call @mgrt_matmul_bf16_f32(%[[O:.*]], %[[A:.*]], %[[B:.*]]) :
// CHECK: call @mgrt_attention_lse_bf16_f32(
// CHECK: call @mgrt_attention_bwd_lse_bf16_f32(
// CHECK: call @mgrt_layer_norm_f32(
// CHECK-NOT: @mgrt_matmul_f32
// CHECK-NOT: @mgrt_attention_lse_f32

// FP32-LABEL: func.func @step(
// FP32: call @mgrt_matmul_f32(
// FP32: call @mgrt_attention_lse_f32(
// FP32: call @mgrt_attention_bwd_lse_f32(
// FP32: call @mgrt_layer_norm_f32(

func.func private @mgrt_matmul_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>)
func.func private @mgrt_attention_lse_f32(memref<?x?x?xf32>, memref<?x?x?xf32>)
func.func private @mgrt_attention_bwd_lse_f32(memref<?x?x?xf32>, memref<?x?x?xf32>)
func.func private @mgrt_layer_norm_f32(memref<?x?x?xf32>)
func.func @step(%o: memref<?x?x?xf32>, %a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>) {
  call @mgrt_matmul_f32(%o, %a, %b) : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
  call @mgrt_attention_lse_f32(%o, %a) : (memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
  call @mgrt_attention_bwd_lse_f32(%o, %a) : (memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
  call @mgrt_layer_norm_f32(%o) : (memref<?x?x?xf32>) -> ()
  return
}
