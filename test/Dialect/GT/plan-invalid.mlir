// RUN: megagraph-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of PlanAttr::verify (GTAttrs.cpp). The parser
// reports them at the `<` that opens the parameters of #gt.plan.

// expected-error@+1 {{dp, pp and cp must be >= 1, got dp = 0, pp = 1, cp = 1}}
module attributes {gt.plan = #gt.plan<dp = 0>} {}

// -----

// expected-error@+1 {{dp, pp and cp must be >= 1, got dp = 2, pp = 0, cp = 1}}
module attributes {gt.plan = #gt.plan<dp = 2, pp = 0>} {}

// -----

// expected-error@+1 {{dp, pp and cp must be >= 1, got dp = 1, pp = 1, cp = -2}}
module attributes {gt.plan = #gt.plan<cp = -2>} {}

// -----

// expected-error@+1 {{micro_batches must be >= 1, got 0}}
module attributes {gt.plan = #gt.plan<pp = 2, micro_batches = 0>} {}

// -----

// expected-error@+1 {{zero must be a ZeRO stage in [0, 3], got 4}}
module attributes {gt.plan = #gt.plan<dp = 4, zero = 4>} {}

// -----

// expected-error@+1 {{zero must be a ZeRO stage in [0, 3], got -1}}
module attributes {gt.plan = #gt.plan<zero = -1>} {}

// -----

// expected-error@+1 {{cp_mode must be "allgather", "ring" or "ulysses", got "tree"}}
module attributes {gt.plan = #gt.plan<cp = 2, cp_mode = "tree">} {}

// -----

// cp_mode is case-sensitive.
// expected-error@+1 {{cp_mode must be "allgather", "ring" or "ulysses", got "Ring"}}
module attributes {gt.plan = #gt.plan<cp = 2, cp_mode = "Ring">} {}

// -----

// expected-error@+1 {{stages lists 3 stage boundaries but pp = 2}}
module attributes {gt.plan = #gt.plan<pp = 2, stages = [0, 3, 6]>} {}

// -----

// With the default pp = 1, more than one stage is an error.
// expected-error@+1 {{stages lists 2 stage boundaries but pp = 1}}
module attributes {gt.plan = #gt.plan<stages = [0, 4]>} {}

// -----

// expected-error@+1 {{the first stage must start at layer 0, got 1}}
module attributes {gt.plan = #gt.plan<pp = 2, stages = [1, 3]>} {}

// -----

// expected-error@+1 {{stage boundaries must be strictly increasing, got 4 then 4}}
module attributes {gt.plan = #gt.plan<pp = 3, stages = [0, 4, 4]>} {}

// -----

// expected-error@+1 {{stage boundaries must be strictly increasing, got 5 then 2}}
module attributes {gt.plan = #gt.plan<pp = 3, stages = [0, 5, 2]>} {}

// -----

// The plan is verified wherever it appears, not only on a module.
func.func @plan_on_func() attributes {
  // expected-error@+1 {{micro_batches must be >= 1, got -3}}
  plan = #gt.plan<micro_batches = -3>
} {
  return
}

// -----

// Parse errors of the struct syntax.
// expected-error@+1 {{duplicate or unknown struct parameter name: dp}}
module attributes {gt.plan = #gt.plan<dp = 2, dp = 4>} {}

// -----

// expected-error@+1 {{duplicate or unknown struct parameter name: tp}}
module attributes {gt.plan = #gt.plan<tp = 2>} {}

// -----

// expected-error@+1 {{mop, gp and chunks must be >= 1, got mop = 0, gp = 1, chunks = 1}}
module attributes {gt.plan = #gt.plan<mop = 0>} {}

// -----

// expected-error@+1 {{mop and gp are two ways of splitting the nodes; give one, got mop = 2, gp = 4}}
module attributes {gt.plan = #gt.plan<mop = 2, gp = 4>} {}
