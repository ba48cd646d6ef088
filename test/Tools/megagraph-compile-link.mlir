// What an executable links: a model compiled without --train calls
// mgrt_infer_main and needs neither METIS, zlib nor MPI; one compiled with
// --train runs the training driver, which does.
// RUN: megagraph-compile %s --emit=exe -o %t.infer
// RUN: ldd %t.infer | not grep -E "libmetis|libmpi|libz\."
// RUN: nm %t.infer | FileCheck %s --check-prefix=INFER
// INFER: T mgrt_infer_main
// INFER-NOT: {{METIS_|MPI_Init|gzopen| mgrt_main$}}

// --mode train on it: no training step, exit code 2, as before the split.
// RUN: not %t.infer --mode train 2>&1 | FileCheck %s --check-prefix=NOSTEP
// NOSTEP: error: --mode train: model 'megagraph-compile-link' has no training step (no output 'loss'); compile it with --train

// RUN: megagraph-compile %s --train --emit=exe -o %t.train 2>/dev/null
// RUN: ldd %t.train | FileCheck %s --check-prefix=TRAIN
// TRAIN-DAG: libmetis
// TRAIN-DAG: libmpi
// TRAIN-DAG: libz.
// RUN: %t.train --mode train --data synthetic:sbm,nodes=64,classes=2,features=3,seed=5 --steps 2 --quiet | FileCheck %s --check-prefix=STEPS
// STEPS: train ok, 2 step(s)

ml_program.global private mutable @w(dense<0.5> : tensor<1x3x2xf32>) : tensor<1x3x2xf32> {gt.param}

func.func @main(%x: tensor<1x4x3xf32> {gt.name = "x"}) -> (tensor<1x4x2xf32> {gt.name = "logits"}) {
  %w = ml_program.global_load @w : tensor<1x3x2xf32>
  %zero = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %x, %w, %zero, %zero : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %y : tensor<1x4x2xf32>
}
