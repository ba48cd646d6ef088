#!/usr/bin/env bash
# GPU checks, run on a machine with an NVIDIA GPU:
#   1. the CUDA kernels against the CPU runtime (MegaGraphCudaTests);
#   2. the NCCL collectives with one rank (MegaGraphCommNcclTests, when
#      built; it needs Open MPI's libraries on the GPU machine);
#   3. --target cuda end to end: the embedded Graphormer compiled for the
#      GPU (scripts/gpu_prepare.sh) trains 20 steps and its losses match
#      the CPU program's trajectory (relative difference <= 1e-3);
#   4. the fused-attention benchmark against unfused cuBLAS attention
#      (megagraph-cuda-attention-bench), FP32 and BF16, S = 4096, 16384,
#      65536, 8 heads of 64; then with a [1,H,S,S] bias at S = 4096, 16384.
# Usage: scripts/gpu_check.sh [BIN_DIR (default build/bin)] [OUT_DIR]
# (BIN_DIR/../lib, when present, holds libraries scripts/gpu_prepare.sh
# bundled; it is put on LD_LIBRARY_PATH.)
# The binaries are built on any machine with CUDA (ninja MegaGraphCudaTests
# megagraph-cuda-attention-bench); they link cudart statically and need
# only the driver and cuBLAS there (from /usr/local/cuda or PyTorch's
# nvidia-* wheels). Without a prebuilt bench, it is compiled here with nvcc.
# Logs and JSON land in OUT_DIR (default $OUT, else gpu-out/). Exits
# non-zero when a test fails or a step cannot run.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${1:-$ROOT/build/bin}
OUT_DIR=${2:-${OUT:-$ROOT/gpu-out}}
BENCH_ARGS=${BENCH_ARGS:-}
mkdir -p "$OUT_DIR"
status=0
step() { echo; echo "== $* ($(date -u +%H:%M:%S))"; }

step "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
  --format=csv 2>&1 | tee "$OUT_DIR/gpu.txt" || status=1

# cuBLAS / NCCL: the toolkit's, else the ones PyTorch's wheels carry.
extra=$(python3 - 2>/dev/null <<'PY'
import glob, os
try:
    import nvidia
    dirs = sorted({os.path.dirname(p) for d in nvidia.__path__
                   for p in glob.glob(os.path.join(d, "*", "lib", "*.so*"))})
    print(":".join(dirs))
except Exception:
    pass
PY
)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${extra:+:$extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -d "$BIN/../lib" ] && export LD_LIBRARY_PATH=$(cd "$BIN/../lib" && pwd):$LD_LIBRARY_PATH

step "kernel tests"
if [ -x "$BIN/MegaGraphCudaTests" ]; then
  ldd "$BIN/MegaGraphCudaTests" | grep "not found"
  timeout 300 "$BIN/MegaGraphCudaTests" \
    --gtest_output=json:"$OUT_DIR/cuda_tests.json" 2>&1 |
    tee "$OUT_DIR/cuda_tests.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  grep -q "SKIPPED" "$OUT_DIR/cuda_tests.log" && {
    echo "gpu_check: GPU tests were skipped"; status=1; }
  # The BF16 forward's shared-memory fallback (used where the register
  # layout probe fails) is tested too.
  MGRT_CUDA_WMMA_REG=0 timeout 120 "$BIN/MegaGraphCudaTests" \
    --gtest_filter='CudaAttention.*' 2>&1 | tail -3 |
    tee "$OUT_DIR/cuda_tests_smem_forward.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
else
  echo "gpu_check: $BIN/MegaGraphCudaTests missing"; status=1
fi

nccl="$BIN/MegaGraphCommNcclTests"
if [ -x "$nccl" ]; then
  step "NCCL tests (1 rank)"
  # MPI_DEBS=DIR: Debian's Open MPI packages (openmpi-bin, libopenmpi3 and
  # their libraries, e.g. from /var/cache/apt/archives) to unpack here when
  # the GPU machine has no MPI of its own.
  if [ -n "${MPI_DEBS:-}" ] && ! ldconfig -p | grep -q libmpi.so.40; then
    root=/tmp/mpiroot
    for f in "$MPI_DEBS"/*.deb; do dpkg -x "$f" "$root"; done
    lib=$root/usr/lib/x86_64-linux-gnu
    export OPAL_PREFIX=$root/usr PATH=$root/usr/bin:$PATH
    export LD_LIBRARY_PATH=$lib:$lib/openmpi/lib:$LD_LIBRARY_PATH
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  if ldd "$nccl" | grep "not found"; then
    echo "gpu_check: NCCL tests not run: libraries missing here (above)"
    status=1
  else
    timeout 120 "$nccl" 2>&1 | tee "$OUT_DIR/nccl_tests.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  fi
fi

train="$BIN/graphormer-train-cuda"
if [ -x "$train" ]; then
  step "--target cuda: 20 training steps against the CPU trajectory"
  rm -f "$OUT_DIR/train_cuda.jsonl"
  # shellcheck disable=SC2046
  MEGAGRAPH_CUDA_SYNC=${MEGAGRAPH_CUDA_SYNC:-0} timeout 300 "$train" \
    $(cat "$BIN/graphormer-train.args") --log-json "$OUT_DIR/train_cuda.jsonl" \
    2>&1 | tee "$OUT_DIR/train_cuda.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  python3 - "$BIN/graphormer-train-cpu.jsonl" "$OUT_DIR/train_cuda.jsonl" \
    <<'PY' 2>&1 | tee -a "$OUT_DIR/train_cuda.log"
import json, sys
cpu, gpu = ([json.loads(l) for l in open(p) if l.strip()] for p in sys.argv[1:])
diff = max(abs(a["loss"] - b["loss"]) / abs(a["loss"]) for a, b in zip(cpu, gpu))
ok = len(cpu) == len(gpu) == 20 and diff <= 1e-3
print(f"train_cuda: {len(gpu)} steps, max relative loss difference {diff:.2e} "
      f"(bar 1e-3), GPU step time {sum(r['step_time_s'] for r in gpu[5:]) / 15:.4f} s, "
      f"CPU {sum(r['step_time_s'] for r in cpu[5:]) / 15:.4f} s "
      + ("OK" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

step "attention benchmark"
bench="$BIN/megagraph-cuda-attention-bench"
if [ ! -x "$bench" ] || ldd "$bench" | grep -q "not found"; then
  echo "gpu_check: building the benchmark here with nvcc"
  bench=/tmp/megagraph-cuda-attention-bench
  nvcc -O3 -std=c++17 -arch=sm_90 -I"$ROOT/runtime/include" \
    "$ROOT"/runtime/cuda/{Attention,Gemm,Memory,Norm}.cu \
    "$ROOT/bench/cuda/attention_bench.cu" \
    -lcublas -o "$bench" || status=1
fi
# shellcheck disable=SC2086
timeout 400 "$bench" --json "$OUT_DIR/attention_bench.json" $BENCH_ARGS 2>&1 |
  tee "$OUT_DIR/attention_bench.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
step "attention benchmark with a [1,H,S,S] bias (the Graphormer case)"
timeout 300 "$bench" --bias --seq 4096,16384 \
  --json "$OUT_DIR/attention_bench_bias.json" 2>&1 |
  tee "$OUT_DIR/attention_bench_bias.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo
echo "gpu_check: $([ $status -eq 0 ] && echo OK || echo FAILED)"
exit $status
