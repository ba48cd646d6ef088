#!/usr/bin/env bash
# The main job on the embedded default example: installs what is missing,
# builds, imports the Graphormer-style example exported from PyTorch, raises
# it to the gt dialect and prints it, then compiles it to a CPU executable,
# runs it on the reference inputs and compares with PyTorch's outputs.
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
