// RUN: megagraph-opt %s --pass-pipeline='builtin.module(func.func(gt-fuse-elementwise))' -split-input-file | FileCheck %s
// RUN: megagraph-opt %s --pass-pipeline='builtin.module(func.func(linalg-fuse-elementwise-ops))' -split-input-file | FileCheck %s --check-prefix=UPSTREAM

// Tests of the gt-fuse-elementwise pass (passes/Lower/GTFuseElementwise.cpp):
// upstream's elementwise fusion, except that a producer whose operands hold
// more bytes than its result is fused only into a consumer next to it (up
// to other elementwise ops, empty tensors, constants and reshapes). The
// UPSTREAM lines show what linalg-fuse-elementwise-ops does with the same
// input.

#id = affine_map<(d0, d1) -> (d0, d1)>

// Gradients summed as they arrive, with other work (a matmul) between the
// adds: each add stays its own loop, so %g4 and %g3 die at the first one.
// Upstream fuses all three adds into one four-input loop at the end.
// CHECK-LABEL: func.func @sum_as_they_arrive
// CHECK:         %[[S1:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<256x256xf32>, tensor<256x256xf32>)
// CHECK:         linalg.matmul
// CHECK:         %[[S2:.+]] = linalg.generic {{.*}} ins(%[[S1]], %{{.+}} : tensor<256x256xf32>, tensor<256x256xf32>)
// CHECK:         linalg.matmul
// CHECK:         linalg.generic {{.*}} ins(%[[S2]], %{{.+}} : tensor<256x256xf32>, tensor<256x256xf32>)
// UPSTREAM-LABEL: func.func @sum_as_they_arrive
// UPSTREAM:         linalg.matmul
// UPSTREAM:         linalg.matmul
// UPSTREAM:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>)
func.func @sum_as_they_arrive(%g4: tensor<256x256xf32>, %g3: tensor<256x256xf32>,
                              %a: tensor<256x256xf32>, %b: tensor<256x256xf32>)
    -> (tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%g4, %g3 : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %g2 = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%s1, %g2 : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<256x256xf32>
  %g1 = linalg.matmul ins(%b, %a : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %s3 = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%s2, %g1 : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<256x256xf32>
  return %s3, %g2, %g1 : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A chain with nothing else between (an update: x * c + y, then exp) fuses
// into one loop; so does a producer with only a broadcast and a full-size
// operand (no more bytes than its result) across a matmul.
// CHECK-LABEL: func.func @chains
// CHECK:         linalg.matmul
// CHECK:         %[[F:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK:           math.exp
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[F]]
func.func @chains(%x: tensor<64x64xf32>, %bias: tensor<64xf32>, %y: tensor<64x64xf32>,
                  %a: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %biased = linalg.generic {indexing_maps = [#id, #row, #id],
                            iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %a : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %t = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%biased, %y : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.mulf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %z = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  return %z, %m : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Negative cases. With a dynamic size the bytes are unknown, so only the
// adjacency rule applies: the add before the matmul stays its own loop
// (upstream fuses it into the add after the matmul). A producer with two
// uses is never fused (as upstream).
// CHECK-LABEL: func.func @dynamic_and_two_uses
// CHECK:         %[[S1:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<?x256xf32>, tensor<?x256xf32>)
// CHECK:           arith.addf
// CHECK:         %[[M:.+]] = linalg.matmul
// CHECK:         linalg.generic {{.*}} ins(%[[S1]], %[[M]] : tensor<?x256xf32>, tensor<?x256xf32>)
// CHECK:         %[[N:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<?x256xf32>)
// CHECK:           math.exp
// CHECK:         %[[Q:.+]] = linalg.generic {{.*}} ins(%[[N]], %{{.+}} : tensor<?x256xf32>, tensor<?x256xf32>)
// CHECK:           arith.mulf
// CHECK:         return %{{.+}}, %[[Q]], %[[N]]
// UPSTREAM-LABEL: func.func @dynamic_and_two_uses
// UPSTREAM:         linalg.matmul
// UPSTREAM:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
func.func @dynamic_and_two_uses(%g4: tensor<?x256xf32>, %g3: tensor<?x256xf32>,
                                %a: tensor<?x256xf32>, %b: tensor<256x256xf32>,
                                %e: tensor<?x256xf32>)
    -> (tensor<?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>) {
  %s1 = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%g4, %g3 : tensor<?x256xf32>, tensor<?x256xf32>) outs(%e : tensor<?x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<?x256xf32>
  %m = linalg.matmul ins(%a, %b : tensor<?x256xf32>, tensor<256x256xf32>) outs(%e : tensor<?x256xf32>) -> tensor<?x256xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%s1, %m : tensor<?x256xf32>, tensor<?x256xf32>) outs(%e : tensor<?x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<?x256xf32>
  %n = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g4 : tensor<?x256xf32>) outs(%e : tensor<?x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<?x256xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%n, %g3 : tensor<?x256xf32>, tensor<?x256xf32>) outs(%e : tensor<?x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<?x256xf32>
  return %s2, %sq, %n : tensor<?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>
}
