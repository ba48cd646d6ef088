// RUN: megagraph-opt %s | megagraph-opt | FileCheck %s
// RUN: megagraph-opt %s --mlir-print-op-generic | megagraph-opt | FileCheck %s

// Round trip of the #gt.plan attribute. Parameters equal to their defaults
// (1, 1, 1, 1, 0, false, "allgather", []) are elided when printed.
// `stages` is a bracketed list and may appear in any position.

// CHECK-LABEL: module @defaults attributes {gt.plan = #gt.plan<>}
module @defaults attributes {gt.plan = #gt.plan<>} {}

// Every parameter spelled out at its default value prints as #gt.plan<>.
// CHECK-LABEL: module @explicit_defaults attributes {gt.plan = #gt.plan<>}
module @explicit_defaults attributes {gt.plan = #gt.plan<dp = 1, pp = 1, cp = 1,
    micro_batches = 1, zero = 0, recompute = false, cp_mode = "allgather">} {}

// CHECK-LABEL: module @data_parallel attributes {gt.plan = #gt.plan<dp = 8, zero = 2>}
module @data_parallel attributes {gt.plan = #gt.plan<dp = 8, zero = 2>} {}

// Parameters are printed in declaration order whatever the input order.
// CHECK-LABEL: module @reordered attributes {gt.plan = #gt.plan<dp = 2, cp = 4, zero = 3, cp_mode = "ulysses">}
module @reordered attributes {gt.plan = #gt.plan<cp_mode = "ulysses", zero = 3,
    cp = 4, dp = 2>} {}

// CHECK-LABEL: module @all_params attributes {gt.plan = #gt.plan<dp = 2, pp = 2, cp = 2, micro_batches = 4, zero = 1, recompute = true, cp_mode = "ring", stages = [0, 5]>}
module @all_params attributes {gt.plan = #gt.plan<dp = 2, pp = 2, cp = 2,
    micro_batches = 4, zero = 1, recompute = true, cp_mode = "ring",
    stages = [0, 5]>} {}

// CHECK-LABEL: module @stages attributes {gt.plan = #gt.plan<pp = 4, micro_batches = 8, stages = [0, 3, 7, 12]>}
module @stages attributes {gt.plan = #gt.plan<pp = 4, micro_batches = 8,
    stages = [0, 3, 7, 12]>} {}

// A single stage starting at layer 0 is valid with the default pp = 1.
// CHECK-LABEL: module @one_stage attributes {gt.plan = #gt.plan<recompute = true, stages = [0]>}
module @one_stage attributes {gt.plan = #gt.plan<recompute = true, stages = [0]>} {}

// The plan next to other module attributes and the ops it applies to.
// CHECK-LABEL: module @with_layers attributes {gt.plan = #gt.plan<pp = 2, stages = [0, 1]>, gt.version = 1 : i64}
// CHECK: gt.layer index = 0 kind = "embedding" {
// CHECK: gt.layer index = 1 kind = "head" {
module @with_layers attributes {gt.version = 1 : i64,
                                gt.plan = #gt.plan<pp = 2, stages = [0, 1]>} {
  func.func @f() {
    gt.layer index = 0 kind = "embedding" {
      gt.yield
    }
    gt.layer index = 1 kind = "head" {
      gt.yield
    }
    return
  }
}

// A plan may also sit on any op, e.g. a function.
// CHECK-LABEL: func.func @plan_on_func() attributes {plan = #gt.plan<cp = 2, cp_mode = "ring">}
func.func @plan_on_func() attributes {plan = #gt.plan<cp = 2, cp_mode = "ring">} {
  return
}

// CHECK-LABEL: module @stages_first attributes {gt.plan = #gt.plan<pp = 2, stages = [0, 3]>}
module @stages_first attributes {gt.plan = #gt.plan<stages = [0, 3], pp = 2>} {}

// Full-graph GCN plans: mixture of parallelism with its accelerator
// pipeline, and partition parallelism.
// CHECK-LABEL: module @mixgcn attributes {gt.plan = #gt.plan<mop = 4, moa = true, chunks = 8>}
module @mixgcn attributes {gt.plan = #gt.plan<chunks = 8, mop = 4, moa = true>} {}
// CHECK-LABEL: module @partition attributes {gt.plan = #gt.plan<gp = 8>}
module @partition attributes {gt.plan = #gt.plan<gp = 8>} {}
