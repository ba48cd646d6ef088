#!/usr/bin/env bash
# Installs every Debian package MegaGraph needs and configures the build.
# Idempotent; run as root on a fresh Debian 12 machine:
#   bash scripts/setup.sh [BUILD_DIR]
set -euo pipefail

BUILD_DIR=${1:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

PACKAGES=(
  # Toolchain and build
  cmake ninja-build ccache g++ git
  # LLVM/MLIR 22 (libMLIR.so, mlir-tblgen, FileCheck, lit)
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
  # ONNX import
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  # Runtime: MPI, BLAS, graph partitioning
  openmpi-bin libopenmpi-dev libopenblas-dev libmetis-dev zlib1g-dev
  # Tests: GoogleTest/GoogleMock; PyTorch/ONNX/NumPy for reference data;
  # LibTorch (C++) for the runtime's kernel references
  libgtest-dev libgmock-dev python3-numpy python3-onnx python3-torch
  libtorch-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
                                          -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT" -B "$ROOT/$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "${launcher[@]}"
echo "setup: configured $ROOT/$BUILD_DIR; build with: cmake --build $BUILD_DIR -j2"
