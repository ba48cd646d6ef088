#!/usr/bin/env bash
# The main job on the embedded default example: installs what is missing,
# builds, imports the Graphormer-style example exported from PyTorch, raises
# it to the gt dialect and prints the result.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${1:-build}
bash "$ROOT/scripts/setup.sh" "$BUILD_DIR"
cmake --build "$ROOT/$BUILD_DIR" -j2
"$ROOT/$BUILD_DIR/bin/megagraph-compile" \
  "$ROOT/examples/models/graphormer/model.onnx" --emit=gt \
  --mlir-elide-elementsattrs-if-larger=16
