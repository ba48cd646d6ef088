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
  # libFuzzer and the sanitizer runtimes for the fuzz targets
  libclang-rt-22-dev
  # ONNX import
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  # Runtime: MPI, BLAS, graph partitioning
  openmpi-bin libopenmpi-dev libopenblas-dev libmetis-dev zlib1g-dev
  # Tests: GoogleTest/GoogleMock; PyTorch/ONNX/NumPy for reference data;
  # LibTorch (C++) for the runtime's kernel references; pytest for the
  # Python package's suite (python/tests) and headless Chromium for its
  # rendering check of the plan report
  libgtest-dev libgmock-dev python3-numpy python3-onnx python3-torch
  libtorch-dev python3-pytest chromium
  # A venv for PyPI's onnx wheel, whose node tests cover opsets 18-23
  python3-venv
  # Launch tests (test/E2E/launch_*.test): a one-node Slurm cluster
  # (slurmctld, slurmd, srun) and two network namespaces as two hosts
  slurm-wlm iproute2 util-linux
)

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi

# ONNX node tests for opsets 18-23: Debian's libonnx-testdata (ONNX 1.12)
# stops at opset 17; PyPI's onnx 1.18 wheel ships the tests up to opset 23
# (onnx/backend/test/data/node). The conformance runner reads only those
# files; test/CMakeLists.txt finds them in this venv.
# The same venv holds PyPI's onnxruntime, the reference that
# test/E2E/infer_checkpoint.test runs the exported trained model on.
ONNX_VENV=/opt/megagraph/onnx-venv
ONNX_TESTS_VERSION=1.18.0
ORT_VERSION=1.32.0
if "$ONNX_VENV/bin/python" -c "import onnx, onnxruntime, sys; sys.exit(onnx.__version__ != '$ONNX_TESTS_VERSION' or onnxruntime.__version__ != '$ORT_VERSION')" \
    2>/dev/null; then
  echo "setup: onnx $ONNX_TESTS_VERSION and onnxruntime $ORT_VERSION present in $ONNX_VENV"
else
  echo "setup: installing onnx==$ONNX_TESTS_VERSION and onnxruntime==$ORT_VERSION (PyPI) in $ONNX_VENV"
  $SUDO mkdir -p "$(dirname "$ONNX_VENV")"
  $SUDO /usr/bin/python3 -m venv "$ONNX_VENV"
  $SUDO "$ONNX_VENV/bin/pip" install -q --disable-pip-version-check \
    "onnx==$ONNX_TESTS_VERSION" "onnxruntime==$ORT_VERSION"
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
                                          -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT" -B "$ROOT/$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "${launcher[@]}"
echo "setup: configured $ROOT/$BUILD_DIR; build with: cmake --build $BUILD_DIR -j2"
