// RUN: not megagraph-opt %s --gt-gpu-offload="block-size=2048" 2>&1 | FileCheck %s
// CHECK: gt-gpu-offload: block-size must be in [1, 1024], got 2048
module {}
