// RUN: megagraph-opt %s --gt-set-plan='plan=dp=2,zero=1' | FileCheck %s --check-prefix=DP
// RUN: megagraph-opt %s --gt-set-plan | FileCheck %s --check-prefix=NONE
// RUN: not megagraph-opt %s --gt-set-plan='plan=dp=2,tp=2' 2>&1 | FileCheck %s --check-prefix=BAD

// gt-set-plan attaches the plan of its option as #gt.plan.
// DP: module attributes {gt.plan = #gt.plan<dp = 2, zero = 1>}
// NONE: module attributes {gt.plan = #gt.plan<>}
// BAD: error: --plan: unknown key 'tp'
module {
  func.func @main() {
    return
  }
}
