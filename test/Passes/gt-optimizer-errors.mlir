// RUN: megagraph-opt %s --gt-optimizer -split-input-file -verify-diagnostics
// RUN: not megagraph-opt %s --gt-autodiff --gt-optimizer=optimizer=rmsprop 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: unknown optimizer 'rmsprop'; use sgd or adamw

// expected-error @+1 {{gt-optimizer needs the gradient function @main_grad (run gt-autodiff first)}}
module {
  func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}
