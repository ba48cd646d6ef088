// RUN: megagraph-opt %s --gt-gpu-offload | FileCheck %s
// RUN: megagraph-opt %s --gt-gpu-offload="emulate-on-host" | FileCheck %s --check-prefix=EMU

// A flag in device memory that the host sets and branches on: the store
// becomes a one-thread kernel (the value is its argument), the load of the
// rank-0 buffer a device-to-host read; emulated, the load stays a host
// load and the kernel host loops.

// CHECK: func.func private @mgrt_cuda_load_i32(memref<i32>) -> i32 attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @flag(
// CHECK: %[[V:.*]] = call @mgrt_cuda_load_i32(%[[F:.*]]) : (memref<i32>) -> i32
// CHECK: %[[SET:.*]] = arith.ori %[[V]]
// CHECK: gpu.launch
// CHECK-NEXT: memref.store %[[SET]], %[[F]][] : memref<i32>
// CHECK-NEXT: gpu.terminator
// CHECK: scf.if

// EMU-LABEL: func.func @flag(
// EMU: %[[V:.*]] = memref.load
// EMU: scf.for
// EMU: scf.for
// EMU: memref.store
// EMU-NOT: mgrt_cuda_load
memref.global "private" @ready : memref<i32> = dense<0>
func.func private @cut(memref<?xf32>)
func.func @flag(%x: memref<?xf32>) {
  %f = memref.get_global @ready : memref<i32>
  %v = memref.load %f[] : memref<i32>
  %one = arith.constant 1 : i32
  %set = arith.ori %v, %one : i32
  memref.store %set, %f[] : memref<i32>
  %zero = arith.constant 0 : i32
  %first = arith.cmpi eq, %v, %zero : i32
  scf.if %first {
    func.call @cut(%x) : (memref<?xf32>) -> ()
  }
  return
}
