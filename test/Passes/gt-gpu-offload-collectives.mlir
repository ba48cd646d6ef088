// RUN: megagraph-opt %s --gt-gpu-offload | FileCheck %s
// RUN: megagraph-opt %s --gt-gpu-offload="emulate-on-host" | FileCheck %s --check-prefix=EMU

// The collectives of dp / cp / pp plans and the context-parallel attention
// keep their operands and go to their device-buffer versions (the
// communication runtime's NCCL backend, the CUDA cp attention); emulated on
// the host they stay the host calls (MPI, CPU kernels).

// CHECK-DAG: func.func private @mgrt_comm_device_all_reduce_f32(
// CHECK-DAG: func.func private @mgrt_comm_device_reduce_scatter_f32(
// CHECK-DAG: func.func private @mgrt_comm_device_all_gather_f32(
// CHECK-DAG: func.func private @mgrt_comm_device_all_slice_f32(
// CHECK-DAG: func.func private @mgrt_comm_device_shift_f32(
// CHECK-DAG: func.func private @mgrt_cuda_cp_attention_f32(
// CHECK-DAG: func.func private @mgrt_cuda_cp_attention_bwd_f32(
// CHECK-LABEL: func.func @step(
// CHECK: call @mgrt_comm_device_all_reduce_f32(%[[G:.*]], %{{.*}}) :
// CHECK: call @mgrt_comm_device_reduce_scatter_f32(
// CHECK: call @mgrt_comm_device_all_gather_f32(
// CHECK: call @mgrt_comm_device_all_slice_f32(
// CHECK: call @mgrt_comm_device_shift_f32(
// CHECK: call @mgrt_cuda_cp_attention_f32(
// CHECK: call @mgrt_cuda_cp_attention_bwd_f32(
// CHECK-NOT: call @mgrt_comm_all
// CHECK-NOT: call @mgrt_cp_

// EMU-LABEL: func.func @step(
// EMU: call @mgrt_comm_all_reduce_f32(
// EMU: call @mgrt_comm_reduce_scatter_f32(
// EMU: call @mgrt_comm_all_gather_f32(
// EMU: call @mgrt_comm_all_slice_f32(
// EMU: call @mgrt_comm_shift_f32(
// EMU: call @mgrt_cp_attention_f32(
// EMU: call @mgrt_cp_attention_bwd_f32(

func.func private @mgrt_comm_all_reduce_f32(memref<?xf32>, i64)
func.func private @mgrt_comm_reduce_scatter_f32(memref<?xf32>, memref<?xf32>, i64)
func.func private @mgrt_comm_all_gather_f32(memref<?xf32>, memref<?xf32>, i64)
func.func private @mgrt_comm_all_slice_f32(memref<?xf32>, memref<?xf32>, i64)
func.func private @mgrt_comm_shift_f32(memref<?xf32>, memref<?xf32>, i64)
func.func private @mgrt_cp_attention_f32(memref<?xf32>, memref<?xf32>, i64)
func.func private @mgrt_cp_attention_bwd_f32(memref<?xf32>, memref<?xf32>, i64)
func.func @step(%x: memref<?xf32>, %y: memref<?xf32>, %g: i64) {
  call @mgrt_comm_all_reduce_f32(%x, %g) : (memref<?xf32>, i64) -> ()
  call @mgrt_comm_reduce_scatter_f32(%y, %x, %g) : (memref<?xf32>, memref<?xf32>, i64) -> ()
  call @mgrt_comm_all_gather_f32(%x, %y, %g) : (memref<?xf32>, memref<?xf32>, i64) -> ()
  call @mgrt_comm_all_slice_f32(%y, %x, %g) : (memref<?xf32>, memref<?xf32>, i64) -> ()
  call @mgrt_comm_shift_f32(%y, %x, %g) : (memref<?xf32>, memref<?xf32>, i64) -> ()
  call @mgrt_cp_attention_f32(%y, %x, %g) : (memref<?xf32>, memref<?xf32>, i64) -> ()
  call @mgrt_cp_attention_bwd_f32(%y, %x, %g) : (memref<?xf32>, memref<?xf32>, i64) -> ()
  return
}
