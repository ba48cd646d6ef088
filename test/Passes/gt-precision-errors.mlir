// RUN: megagraph-opt %s --gt-precision="precision=bf16" --split-input-file --verify-diagnostics
// RUN: not megagraph-opt %s --gt-precision="precision=fp8" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: gt-precision: precision must be fp32 or bf16, got 'fp8'

// An attention kernel without a BF16 version cannot honour bf16.
func.func private @mgrt_cp_attention_f32(memref<?xf32>)
func.func @cp(%x: memref<?xf32>) {
  // expected-error @+1 {{runtime call @mgrt_cp_attention_f32 has no bf16 version yet; compile this model with --precision fp32}}
  call @mgrt_cp_attention_f32(%x) : (memref<?xf32>) -> ()
  return
}

// -----

func.func private @mgrt_sparse_attention_f32(memref<?xf32>)
func.func @sparse(%x: memref<?xf32>) {
  // expected-error @+1 {{runtime call @mgrt_sparse_attention_f32 has no bf16 version yet}}
  call @mgrt_sparse_attention_f32(%x) : (memref<?xf32>) -> ()
  return
}
