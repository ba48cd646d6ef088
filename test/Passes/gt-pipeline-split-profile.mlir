// gt-pipeline-split prices the units with a hardware profile (the plan
// search's, megagraph/Plan/Profile.h): GEMMs at the GEMM rates, attention
// at the attention rate, the rest at the memory bandwidth, plus the per-op
// overhead; forward + backward = 4x the forward under recompute (the
// option's default; 3x without). Two profile files that
// make either the GEMMs or the attention the only cost move the cut.
// RUN: echo '{"gemm_flops": 1e12, "small_gemm_flops": 1e3, "attention_flops": 1e12, "memory_bandwidth": 1e12, "op_overhead_s": 0}' > %t.gemm.json
// RUN: echo '{"gemm_flops": 1e12, "small_gemm_flops": 1e12, "attention_flops": 1e3, "memory_bandwidth": 1e12, "op_overhead_s": 0}' > %t.att.json
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 profile=%t.gemm.json" | FileCheck %s --check-prefix=GEMM
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 profile=%t.att.json" | FileCheck %s --check-prefix=ATT
// A measured GEMM curve (megagraph-profile's gemm_curve) replaces the two
// GEMM rates: a product runs at the curve's rate (log-log interpolated) at
// the geometric mean of its two largest sizes; here 12 x 4 x 8, 12 x 8 x 8
// and 12 x 8 x 3 all at sqrt(12 * 8) = 9.80: 1e3 * 4^(ln(9.80/4) / ln 4)
// = 2449 FLOP/s, so the linears cost 4 x 768, 4 x 1536, 4 x 576 FLOPs /
// 2449 = 1.254, 2.508, 0.9406 s.
// RUN: echo '{"gemm_flops": 1e12, "attention_flops": 1e12, "memory_bandwidth": 1e12, "op_overhead_s": 0, "gemm_curve": [{"n": 16, "flops": 4e3}, {"n": 4, "flops": 1e3}]}' > %t.curve.json
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 profile=%t.curve.json" | FileCheck %s --check-prefix=CURVE
// CURVE: stages = [0, 4]
// CURVE-SAME: unit_time = [1.25{{[0-9]*(e\+00)?}}, {{[-+.0-9eE]+}}, {{[-+.0-9eE]+}}, {{[-+.0-9eE]+}}, 2.50{{[0-9]*(e\+00)?}}, {{0.940[0-9]*|9.40[0-9]*e-01}}]
// Built-in profiles by name (the default is cpu-here).
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 profile=a100" | FileCheck %s --check-prefix=NAMED
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 profile=cpu-here" | FileCheck %s --check-prefix=NAMED
// Bad profiles.
// RUN: not megagraph-opt %s --gt-pipeline-split="pp=2 profile=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo '{"memory_bandwidth": 1e9}' > %t.bad.json
// RUN: not megagraph-opt %s --gt-pipeline-split="pp=2 profile=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: echo '{"gemm_flops": 0, "memory_bandwidth": 1e9}' > %t.zero.json
// RUN: not megagraph-opt %s --gt-pipeline-split="pp=2 profile=%t.zero.json" 2>&1 | FileCheck %s --check-prefix=ZERO

// Units: the node encoder (gt.linear 4 -> 8 on 12 rows: 768 FLOPs), the
// spatial bias, the attention, the first residual, the FFN (gt.linear
// 8 -> 8: 1536 FLOPs, gelu, residual), the head (gt.linear 8 -> 3: 576
// FLOPs). Every GEMM has a dimension under 64: small-GEMM rate.
// GEMM-bound at 1 kFLOP/s: unit times 4 x 0.768 s, 0, 0, 0, 4 x 1.536 s
// (+ the gelu and add at 1 TB/s), 4 x 0.576 s; the slowest stage is least
// with the FFN and the head on stage 1 (6.144 + 2.304 s against 3.072 +
// 6.144 s when the FFN joins stage 0).
// GEMM: stages = [0, 4]
// GEMM-SAME: unit_time = [3.07{{[0-9]*(e\+00)?}}, {{[-+.0-9eE]+}}, {{[-+.0-9eE]+}}, {{[-+.0-9eE]+}}, 6.14{{[0-9]*(e\+00)?}}, 2.30{{[0-9]*(e\+00)?}}]
// GEMM-SAME: stage_time = [3.07{{[0-9]*(e\+00)?}}, 8.44{{[0-9]*(e\+00)?}}]
// Without recompute: 3x.
// RUN: megagraph-opt %s --gt-pipeline-split="pp=2 mb=4 recompute=false profile=%t.gemm.json" | FileCheck %s --check-prefix=STASH
// STASH: unit_time = [2.30{{[0-9]*(e\+00)?}}, {{[-+.0-9eE]+}}, {{[-+.0-9eE]+}}, {{[-+.0-9eE]+}}, 4.60{{[0-9]*(e\+00)?}}, 1.72{{[0-9]*(e\+00)?}}]
// Attention-bound (gt.attention's CostOpInterface: 3024 FLOPs, at
// 1 kFLOP/s, x4): the attention ends stage 0, whose other units cost next
// to nothing.
// ATT: stages = [0, 3]
// ATT-SAME: unit_time = [{{[-+.0-9eE]+}}, {{[-+.0-9eE]+}}, {{12.09[0-9]*|1.209[0-9]*e\+01}}, {{[-+.0-9eE]+}}, {{[-+.0-9eE]+}}, {{[-+.0-9eE]+}}]
// ATT-SAME: stage_time = [{{12.09[0-9]*|1.209[0-9]*e\+01}}, {{[-+.0-9eE]+}}]
// NAMED: gt.pipeline = #gt.pipeline<{{.*}}stages = [0,
// NAMED-LABEL: func.func @pp_stage1(
// MISSING: error: gt-pipeline-split: --profile {{.*}}.missing.json: neither a built-in profile (cpu-here, a100, h100, h200) nor a readable file
// BAD: error: gt-pipeline-split: --profile {{.*}}.bad.json: not a hardware profile
// ZERO: error: gt-pipeline-split: --profile {{.*}}.zero.json: gemm_flops and memory_bandwidth must be positive

ml_program.global private mutable @w0(dense<0.1> : tensor<4x8xf32>) : tensor<4x8xf32> {gt.param}
ml_program.global private mutable @b0(dense<0.0> : tensor<8xf32>) : tensor<8xf32> {gt.param}
ml_program.global private mutable @sw(dense<0.2> : tensor<5x2xf32>) : tensor<5x2xf32> {gt.param}
ml_program.global private mutable @w1(dense<0.3> : tensor<8x8xf32>) : tensor<8x8xf32> {gt.param}
ml_program.global private mutable @b1(dense<0.0> : tensor<8xf32>) : tensor<8xf32> {gt.param}
ml_program.global private mutable @w2(dense<0.4> : tensor<8x3xf32>) : tensor<8x3xf32> {gt.param}
ml_program.global private mutable @b2(dense<0.0> : tensor<3xf32>) : tensor<3xf32> {gt.param}
func.func @main(%x: tensor<2x6x4xf32> {gt.name = "x"}, %spd: tensor<2x6x6xi64> {gt.name = "spd"}) -> (tensor<2x6x3xf32> {gt.name = "logits"}) {
  %w0 = ml_program.global_load @w0 : tensor<4x8xf32>
  %b0 = ml_program.global_load @b0 : tensor<8xf32>
  %sw = ml_program.global_load @sw : tensor<5x2xf32>
  %w1 = ml_program.global_load @w1 : tensor<8x8xf32>
  %b1 = ml_program.global_load @b1 : tensor<8xf32>
  %w2 = ml_program.global_load @w2 : tensor<8x3xf32>
  %b2 = ml_program.global_load @b2 : tensor<3xf32>
  %enc = gt.linear %x, %w0, %b0 : (tensor<2x6x4xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x6x8xf32>
  %bias = gt.spatial_bias %spd, %sw : (tensor<2x6x6xi64>, tensor<5x2xf32>) -> tensor<2x2x6x6xf32>
  %att = gt.attention %enc, %enc, %enc bias(%bias) heads = 2 {scale = 0.5 : f32} : (tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x2x6x6xf32>) -> tensor<2x6x8xf32>
  %r1 = tosa.add %enc, %att : (tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %h = gt.linear %r1, %w1, %b1 : (tensor<2x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x6x8xf32>
  %g = gt.gelu %h : tensor<2x6x8xf32>
  %r2 = tosa.add %r1, %g : (tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %out = gt.linear %r2, %w2, %b2 : (tensor<2x6x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<2x6x3xf32>
  return %out : tensor<2x6x3xf32>
}
