// RUN: megagraph-opt %s -split-input-file --gt-attention-keep-lse | FileCheck %s
// Idempotent: a second run changes nothing.
// RUN: megagraph-opt %s -split-input-file --gt-attention-keep-lse --gt-attention-keep-lse | FileCheck %s

// The forward keeps its lse; the gradient takes it and the forward's result.
// Discardable attributes of both survive.
// CHECK-LABEL: func.func @pair
// CHECK-SAME:    (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x6x8xf32>, %[[V:.*]]: tensor<2x6x8xf32>, %[[B:.*]]: tensor<2x4x6xf32>, %[[DO:.*]]: tensor<2x4x8xf32>)
// CHECK:         %[[O:.*]], %[[L:.*]] = gt.attention_lse %[[Q]], %[[K]], %[[V]] bias(%[[B]]) heads = 2 {scale = 2.500000e-01 : f32, tag = 1 : i64} : {{.*}} -> (tensor<2x4x8xf32>, tensor<2x2x4xf32>)
// CHECK:         %[[DQ:.*]], %{{.*}}, %{{.*}}, %[[DB:.*]] = gt.attention_grad %[[DO]], %[[Q]], %[[K]], %[[V]] bias(%[[B]]) out(%[[O]]) lse(%[[L]]) heads = 2 {scale = 2.500000e-01 : f32, tag = 2 : i64}
// CHECK-NOT:     gt.attention %
// CHECK:         return %[[O]], %[[DQ]], %[[DB]]
func.func @pair(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>, %b: tensor<2x4x6xf32>, %do: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>) {
  %o = gt.attention %q, %k, %v bias(%b) heads = 2 {scale = 0.25 : f32, tag = 1} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>) -> tensor<2x4x8xf32>
  %dq, %dk, %dv, %db = gt.attention_grad %do, %q, %k, %v bias(%b) heads = 2 {scale = 0.25 : f32, tag = 2} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4x6xf32>)
  return %o, %dq, %db : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>
}

// -----

// Not the same attention (another scale, another mask, another key): the
// gradients recompute their statistics and the forward stays.
// CHECK-LABEL: func.func @different
// CHECK:         gt.attention %
// CHECK-NOT:     gt.attention_lse
// CHECK-NOT:     out(
func.func @different(%q: tensor<1x4x8xf32>, %k: tensor<1x4x8xf32>, %m: tensor<4x4xi1>, %do: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %o = gt.attention %q, %k, %k heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %a:3 = gt.attention_grad %do, %q, %k, %k heads = 2 {scale = 0.5 : f32} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  %b:3 = gt.attention_grad %do, %q, %k, %k mask(%m) heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<4x4xi1>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  %c:3 = gt.attention_grad %do, %q, %q, %k heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  return %o, %a#0, %b#0, %c#0 : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// A gradient before its forward, or whose forward is in another block, is
// left as it is.
// CHECK-LABEL: func.func @elsewhere
// CHECK-NOT:     gt.attention_lse
// CHECK-NOT:     out(
func.func @elsewhere(%q: tensor<1x4x8xf32>, %do: tensor<1x4x8xf32>, %c: i1) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %g:3 = gt.attention_grad %do, %q, %q, %q heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  %o = gt.attention %q, %q, %q heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %r = scf.if %c -> tensor<1x4x8xf32> {
    %h:3 = gt.attention_grad %do, %q, %q, %q heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
    scf.yield %h#0 : tensor<1x4x8xf32>
  } else {
    scf.yield %q : tensor<1x4x8xf32>
  }
  return %o, %g#0, %r : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// Context-parallel attentions keep their cp kernels.
// CHECK-LABEL: func.func @context_parallel
// CHECK:         gt.attention %{{.*}} {gt.cp =
// CHECK-NOT:     out(
func.func @context_parallel(%q: tensor<1x4x8xf32>, %bias: tensor<2x4x8xf32>, %do: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %o = gt.attention %q, %q, %q bias(%bias) heads = 2 {gt.cp = #gt.cp<mode = ring, size = 2, grid = [1, 2, 1, 1], axes = 2>} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<2x4x8xf32>) -> tensor<1x4x8xf32>
  %g:4 = gt.attention_grad %do, %q, %q, %q bias(%bias) heads = 2 {gt.cp = #gt.cp<mode = ring, size = 2, grid = [1, 2, 1, 1], axes = 2>} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<2x4x8xf32>)
  return %o, %g#0 : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// Two gradients of one forward share its lse.
// CHECK-LABEL: func.func @shared
// CHECK:         %[[O:.*]], %[[L:.*]] = gt.attention_lse
// CHECK:         gt.attention_grad {{.*}} out(%[[O]]) lse(%[[L]])
// CHECK:         gt.attention_grad {{.*}} out(%[[O]]) lse(%[[L]])
func.func @shared(%q: tensor<1x4x8xf32>, %do: tensor<1x4x8xf32>, %do2: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %o = gt.attention %q, %q, %q heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %g:3 = gt.attention_grad %do, %q, %q, %q heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  %h:3 = gt.attention_grad %do2, %q, %q, %q heads = 2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  return %o, %g#0, %h#0 : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}
