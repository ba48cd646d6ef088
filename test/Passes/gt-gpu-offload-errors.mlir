// RUN: megagraph-opt %s --gt-gpu-offload --split-input-file --verify-diagnostics

// A runtime call without a CUDA version is rejected, naming the call.
func.func private @mgrt_spmm_f32(memref<?xf32>)
func.func @spmm(%x: memref<?xf32>) {
  // expected-error @+1 {{runtime call @mgrt_spmm_f32 has no CUDA version yet}}
  call @mgrt_spmm_f32(%x) : (memref<?xf32>) -> ()
  return
}

// -----

// The pass runs on buffers, not tensors.
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{gt-gpu-offload needs linalg ops on memrefs}}
  %r = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A host-level element access would read device memory on the host.
func.func @host_load(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{this op would read or write device memory on the host}}
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}

// -----

// Kernels cannot read the host's stack.
func.func @stack(%y: memref<4xf32>) {
  // expected-error @+1 {{a kernel uses this host stack buffer}}
  %a = memref.alloca() : memref<4xf32>
  memref.copy %a, %y : memref<4xf32> to memref<4xf32>
  return
}
