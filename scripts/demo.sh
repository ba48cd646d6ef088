#!/usr/bin/env bash
# The main job on the embedded default example: installs what is missing,
# builds, imports the Graphormer-style example exported from PyTorch, raises
# it to the gt dialect and prints it, compiles it to a CPU executable, runs
# it on the reference inputs and compares with PyTorch's outputs, then
# compiles its training step (forward, loss, backward, AdamW) and trains it
# on the embedded synthetic dataset (a stochastic block model whose blocks
# are the classes), printing loss and accuracy per step.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${1:-build}
EXAMPLE="$ROOT/examples/models/graphormer"
bash "$ROOT/scripts/setup.sh" "$BUILD_DIR"
cmake --build "$ROOT/$BUILD_DIR" -j2
BIN="$ROOT/$BUILD_DIR/bin"
echo "== gt dialect after import and raising"
"$BIN/megagraph-compile" "$EXAMPLE/model.onnx" --emit=gt \
  --mlir-elide-elementsattrs-if-larger=16
echo "== compile to a CPU executable and run it"
"$BIN/megagraph-compile" "$EXAMPLE/model.onnx" --emit=exe \
  -o "$ROOT/$BUILD_DIR/graphormer"
/usr/bin/python3 "$ROOT/test/E2E/run_example.py" "$ROOT/$BUILD_DIR/graphormer" \
  "$EXAMPLE" --tol 1e-4
echo "== compile the training step and train on synthetic:sbm"
"$BIN/megagraph-compile" "$EXAMPLE/model.onnx" --train --optimizer adamw \
  --lr 0.003 --emit=exe -o "$ROOT/$BUILD_DIR/graphormer-train"
# The example's x holds 3 categorical features (16 values each), spd is
# embedded up to 7 hops and it predicts 4 classes.
"$ROOT/$BUILD_DIR/graphormer-train" --mode train \
  --data synthetic:sbm,nodes=4096,classes=4,features=3,signal=3 \
  --categories 16 --max-distance 7 --steps 200 \
  --log-json "$ROOT/$BUILD_DIR/graphormer-train.jsonl"
