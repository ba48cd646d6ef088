# Shared by bench/run_inference_bench.sh and bench/run_training_bench.sh
# (sourced, not run). Expects ROOT (the repository root, the current
# directory) and sets:
#   BUILD_DIR (absolute), THREADS, NICE, DATE, PY, COMMANDS (array)
#   the thread environment of both sides: MEGAGRAPH_NUM_THREADS (the
#   runtime's pool; it sets OpenBLAS to 1 thread itself), OMP_NUM_THREADS +
#   OPENBLAS_NUM_THREADS + MKL_NUM_THREADS (LibTorch's intra-op pool and BLAS)
# and defines log, run (records the command, paths relative to ROOT),
# require_tools TOOL... and nice_prefix.
BUILD_DIR=${BUILD_DIR:-build-bench}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
THREADS=${THREADS:-2}
NICE=${NICE:-}
DATE=$(date +%Y-%m-%d)
PY=/usr/bin/python3
export MEGAGRAPH_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
export OPENBLAS_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
# OpenBLAS's own CPU detection, as on a user's machine: some of our sandboxes
# export OPENBLAS_CORETYPE=Haswell, which on an AVX-512 CPU (OpenBLAS 0.3.21
# picks Cooperlake on a Zen 5 by itself) halves the vector width of
# MegaGraph's BLAS matmuls. PyTorch's GEMMs (oneDNN, MKL) do not read it.
# BLAS_CORE=keep leaves it as it is.
if [ "${BLAS_CORE:-}" != keep ]; then
  unset OPENBLAS_CORETYPE
fi

COMMANDS=()
log() { echo "[bench] $*" >&2; }
# Waits SETTLE seconds (default 5) before a timed process. On our VM guests
# a process started within a few seconds of the exit of one that held
# gigabytes (PyTorch) ran 1.6x slower (S = 1024 inference: 22 ms for the
# first two runs, 13 ms from the third on) while the guest took the memory
# back; each side should start on a settled machine.
settle() { sleep "${SETTLE:-5}"; }
# Runs and records a command.
run() {
  COMMANDS+=("$(printf '%q ' "$@" | sed "s|$ROOT/||g")")
  "$@"
}
# Exits with a build hint unless every TOOL is executable; the hint names the
# ninja targets in BUILD_TARGETS.
require_tools() {
  for tool in "$@"; do
    if [ ! -x "$tool" ]; then
      echo "error: $tool not found; build it first:" >&2
      echo "  ninja -C $BUILD_DIR $BUILD_TARGETS" >&2
      exit 1
    fi
  done
}
# The words to put before a timed binary: `nice -n NICE` when NICE is set.
nice_prefix() {
  [ -n "$NICE" ] && echo "nice -n $NICE"
  return 0
}
