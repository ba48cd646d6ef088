#!/usr/bin/env bash
# The first GPU check, in one command of at most 10 minutes, on a machine
# with an NVIDIA GPU and nothing but the working tree and what
# scripts/gpu_prepare.sh packed (BIN_DIR = .gpu/bin):
#   1. the CUDA kernels and step calls against the CPU runtime
#      (MegaGraphCudaTests; the attention tests again on the shared-memory
#      fallback kernels);
#   2. --target cuda end to end: the embedded Graphormer trains 20 AdamW
#      steps on the GPU; its losses match the CPU program's (relative
#      difference <= 1e-3); step time and device peak memory;
#   3. --precision bf16 on the GPU: the same 20 steps follow the FP32 CPU
#      trajectory within the BF16 tolerance of test/E2E/train_bf16_check.py
#      (and the CPU's BF16 trajectory within it too);
#   4. NCCL on one GPU: the device collectives and the context-parallel
#      attention of multi-GPU programs with one rank
#      (MegaGraphCudaCommTests), the NCCL backend's own tests
#      (MegaGraphCommNcclTests);
#   5. a multi-rank --target cuda program: the two-stage pipeline
#      (pp=2, mb=1) under mpirun -np 2, both ranks on this GPU, against the
#      CPU trajectory (1e-3);
#   6. the fused-attention benchmark against unfused cuBLAS attention, with
#      whatever time is left.
# Results land in OUT_DIR (default $OUT, else gpu-out/), at most 8 files so
# that a device call brings them all back: summary.md (the figures, for
# bench/results/), check.log (everything printed), cuda_tests.json, the
# three training logs and attention_bench.json.
# Usage: scripts/gpu_check.sh [BIN_DIR (default .gpu/bin)] [OUT_DIR]
# BIN_DIR/../lib (libraries) and BIN_DIR/../mpi (Open MPI packages,
# unpacked when the machine has no MPI) come from gpu_prepare.sh.
# GPU_CHECK_BUDGET (seconds, default 560) bounds the whole run; each step
# gets at most what is left. Exits non-zero when a check fails.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(cd "${1:-$ROOT/.gpu/bin}" && pwd)
OUT_DIR=${2:-${OUT:-$ROOT/gpu-out}}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
exec > >(tee -a "$OUT_DIR/check.log") 2>&1
START=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET:-560}
status=0
SUMMARY=$OUT_DIR/summary.md
step() { echo; echo "== $* ($(date -u +%H:%M:%S), $(($(date +%s) - START)) s)"; }
# Seconds for the next step: at most $1, at most what is left.
cap() {
  local left=$((BUDGET - ($(date +%s) - START)))
  [ "$left" -lt "$1" ] && echo $((left > 5 ? left : 5)) || echo "$1"
}
fail() { echo "gpu_check: $*"; echo "* FAILED: $*" >>"$SUMMARY"; status=1; }

{
  echo "# First GPU check ($(date -u +%Y-%m-%d))"
  echo
  echo "Command: \`tar -xJf .gpu.tar.xz && scripts/gpu_check.sh .gpu/bin \$OUT\`"
  echo "(programs and reference logs from \`scripts/gpu_prepare.sh\`, commit"
  echo "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown))."
  echo
} >"$SUMMARY"

step "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
  --format=csv 2>&1 | tee -a "$SUMMARY" || fail "nvidia-smi"

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
# Open MPI: the machine's, else Debian's packages from gpu_prepare.sh
# unpacked under /tmp/mpiroot (mpirun, orted and their libraries).
if ! command -v mpirun >/dev/null && [ -d "$BIN/../mpi" ]; then
  root=/tmp/mpiroot
  for f in "$BIN"/../mpi/*.deb; do dpkg -x "$f" "$root"; done
  lib=$root/usr/lib/x86_64-linux-gnu
  export OPAL_PREFIX=$root/usr PATH=$root/usr/bin:$PATH
  export LD_LIBRARY_PATH=$lib:$lib/openmpi/lib:$LD_LIBRARY_PATH
  export PMIX_MCA_mca_base_component_path=$lib/pmix2/lib/pmix
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export MEGAGRAPH_COMM_TIMEOUT=60

step "1. kernel and step-call tests"
if [ -x "$BIN/MegaGraphCudaTests" ]; then
  ldd "$BIN/MegaGraphCudaTests" | grep "not found"
  timeout "$(cap 200)" "$BIN/MegaGraphCudaTests" \
    --gtest_output=json:"$OUT_DIR/cuda_tests.json" 2>&1 | tail -40
  rc=${PIPESTATUS[0]}
  python3 - "$OUT_DIR/cuda_tests.json" >>"$SUMMARY" <<'PY' || rc=1
import json, sys
r = json.load(open(sys.argv[1]))
tests = [t for s in r["testsuites"] for t in s["testsuite"]]
skipped = [t["name"] for t in tests if t.get("result") == "SKIPPED"]
failed = [f"{t['classname']}.{t['name']}" for t in tests if t.get("failures")]
print(f"* MegaGraphCudaTests: {len(tests)} tests, {len(failed)} failed, "
      f"{len(skipped)} skipped{': ' + ', '.join(failed) if failed else ''}")
sys.exit(1 if failed or skipped else 0)
PY
  [ "$rc" -eq 0 ] || fail "MegaGraphCudaTests"
  MGRT_CUDA_WMMA_REG=0 timeout "$(cap 90)" "$BIN/MegaGraphCudaTests" \
    --gtest_filter='CudaAttention.*' 2>&1 | tail -3
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "CudaAttention.* on the fallback kernels"
else
  fail "$BIN/MegaGraphCudaTests missing"
fi

# Trains $1 (a program in BIN) into OUT_DIR/$2.jsonl, under the launcher
# words in $3..
train() {
  local exe=$1 log=$OUT_DIR/$2.jsonl
  shift 2
  rm -f "$log"
  # shellcheck disable=SC2046
  MEGAGRAPH_CUDA_SYNC=${MEGAGRAPH_CUDA_SYNC:-0} timeout "$(cap 150)" "$@" \
    "$BIN/$exe" $(cat "$BIN/graphormer-train.args") --log-json "$log" 2>&1 |
    tail -20
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "$exe did not train"
}
# Compares OUT_DIR/$1.jsonl with the CPU log $2 (in BIN) at relative bar
# $3, naming it $4; appends the figures to the summary.
compare() {
  python3 - "$BIN/$2" "$OUT_DIR/$1.jsonl" "$3" "$4" <<'PY' | tee -a "$SUMMARY"
import json, os, sys
def records(p):
    return ([json.loads(l) for l in open(p) if l.strip()]
            if os.path.exists(p) else [])
ref, got = records(sys.argv[1]), records(sys.argv[2])
bar, name = float(sys.argv[3]), sys.argv[4]
if not got or not ref:
    print(f"* {name}: {len(got)} steps logged ({len(ref)} in the reference) FAIL")
    sys.exit(1)
diff = max(abs(a["loss"] - b["loss"]) / abs(a["loss"]) for a, b in zip(ref, got))
ok = len(ref) == len(got) == 20 and diff <= bar
def mean(rs, k): return sum(r[k] for r in rs[5:]) / max(len(rs[5:]), 1)
peak = max(max(r.get("device_peak_bytes") or [0]) for r in got)
print(f"* {name}: {len(got)} steps, max relative loss difference "
      f"{diff:.2e} (bar {bar:g}), last loss {got[-1]['loss']:.6} (CPU "
      f"{ref[-1]['loss']:.6}); step time {mean(got, 'step_time_s'):.4f} s "
      f"(CPU {mean(ref, 'step_time_s'):.4f} s, mean of steps 6-20); device "
      f"peak {peak / 2**20:.1f} MiB; {'OK' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "$4"
}
BF16_BAR=$(python3 -c "import sys; sys.path.insert(0, '$ROOT/test/E2E'); \
import train_bf16_check as t; print(t.TOLERANCE)" 2>/dev/null || echo 0.05)

step "2. --target cuda: 20 training steps against the CPU trajectory"
train graphormer-train-cuda train_cuda
compare train_cuda graphormer-train-cpu.jsonl 1e-3 "--target cuda FP32 vs CPU FP32"

step "3. --precision bf16 on the GPU"
train graphormer-train-cuda-bf16 train_cuda_bf16
compare train_cuda_bf16 graphormer-train-cpu.jsonl "$BF16_BAR" \
  "--target cuda BF16 vs CPU FP32"
compare train_cuda_bf16 graphormer-train-cpu-bf16.jsonl "$BF16_BAR" \
  "--target cuda BF16 vs CPU BF16"

step "4. NCCL on one GPU"
for t in MegaGraphCudaCommTests MegaGraphCommNcclTests; do
  if [ ! -x "$BIN/$t" ]; then fail "$t missing"; continue; fi
  if ldd "$BIN/$t" | grep "not found"; then fail "$t: libraries missing"; continue; fi
  timeout "$(cap 90)" "$BIN/$t" >/tmp/gpu_check_$t.log 2>&1
  rc=$?
  tail -15 /tmp/gpu_check_$t.log
  # Skipped tests (no GPU seen) or NCCL's "skipped" exit code 77 fail.
  grep -q "SKIPPED" /tmp/gpu_check_$t.log && rc=1
  echo "* $t (one rank): $(grep -E "PASSED|FAILED" /tmp/gpu_check_$t.log | head -2 | tr '\n' ' ')exit code $rc $([ "$rc" -eq 0 ] && echo OK || echo FAIL)" >>"$SUMMARY"
  [ "$rc" -eq 0 ] || fail "$t"
done

step "5. two ranks: the pp=2 program under mpirun -np 2"
if command -v mpirun >/dev/null; then
  train graphormer-train-cuda-pp2 train_cuda_pp2 mpirun --oversubscribe \
    --mca btl self,vader -x LD_LIBRARY_PATH -x MEGAGRAPH_COMM_TIMEOUT -np 2
  compare train_cuda_pp2 graphormer-train-cpu.jsonl 1e-3 \
    "--target cuda pp=2 (2 ranks, one GPU) vs CPU FP32"
else
  fail "no mpirun: the two-rank check did not run"
fi

step "6. attention benchmark (what time is left)"
bench="$BIN/megagraph-cuda-attention-bench"
if [ -x "$bench" ] && [ "$(cap 120)" -gt 30 ]; then
  timeout "$(cap 120)" "$bench" --seq 4096,16384 \
    --json "$OUT_DIR/attention_bench.json" 2>&1 | tail -20
  [ "${PIPESTATUS[0]}" -eq 0 ] || echo "gpu_check: the benchmark did not finish"
else
  echo "gpu_check: benchmark skipped (missing or no time left)"
fi

echo
echo "* Total $(($(date +%s) - START)) s; $([ $status -eq 0 ] && echo all checks OK || echo some checks FAILED)" >>"$SUMMARY"
cat "$SUMMARY"
echo "gpu_check: $([ $status -eq 0 ] && echo OK || echo FAILED)"
exit $status
