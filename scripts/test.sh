#!/usr/bin/env bash
# Installs what is missing, builds MegaGraph from BUILD_DIR (default build/)
# and runs every test (lit + GoogleTest through CTest). Exits non-zero when
# any test fails.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${1:-build}
bash "$ROOT/scripts/setup.sh" "$BUILD_DIR"
cmake --build "$ROOT/$BUILD_DIR" -j2
ctest --test-dir "$ROOT/$BUILD_DIR" --output-on-failure -j2
