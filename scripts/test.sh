#!/usr/bin/env bash
# Installs what is missing, builds MegaGraph from BUILD_DIR (default build/)
# and runs every test (lit + GoogleTest through CTest), then builds the
# libFuzzer targets in BUILD_DIR-fuzz and runs each for a short fixed
# number of inputs. Exits non-zero when any test fails.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${1:-build}
bash "$ROOT/scripts/setup.sh" "$BUILD_DIR"
cmake --build "$ROOT/$BUILD_DIR" -j2
ctest --test-dir "$ROOT/$BUILD_DIR" --output-on-failure -j2

# Fuzzing: a second, small clang build (ASan + UBSan) of the fuzz targets
# and only what they link, the importer's libraries and the readers'
# sources; then the fixed runs of test/fuzz on the seed corpora.
FUZZ_DIR="$BUILD_DIR-fuzz"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
                                          -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT" -B "$ROOT/$FUZZ_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DMEGAGRAPH_FUZZ=ON "${launcher[@]}" >/dev/null
cmake --build "$ROOT/$FUZZ_DIR" -j2 --target megagraph-fuzz
ctest --test-dir "$ROOT/$FUZZ_DIR" --output-on-failure -R '^fuzz-'
