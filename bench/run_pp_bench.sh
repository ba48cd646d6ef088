#!/usr/bin/env bash
# Pipeline-parallel benchmark (issue 8): even split vs cost-balanced split of
# a Graphormer-style model whose node encoder costs about as much as several
# transformer layers (bench/pp_bench_model.py: MLP encoder F=64 -> 384 ->
# 384 -> D=64, degree and spatial-bias encoders, 6 layers, S=64). For each
# pp in PPS the model (micro-batch MICRO sequences) is compiled with
# --plan pp=K,mb=MB twice: --pp-balance=even (as many pipeline units per
# stage) and --pp-balance=cost (the StageSplit DP over CostOpInterface
# estimates), and each is trained under `mpirun -np K` (MEGAGRAPH_NUM_THREADS
# threads per rank) for WARMUP + STEPS steps, REPEAT times, alternating the
# two executables. Reported: the stage boundaries, the median step time over
# all timed steps, the per-rank peak of the runtime-tracked memory
# (mgrt_peak_bytes, the largest over the steps), and the loss of both runs
# (the same training: the split changes no arithmetic). A benchmark, never a
# test; exits 1 if a run fails or the two losses differ by more than 1e-4.
#
#   bash bench/run_pp_bench.sh
#
# Environment [defaults]: BUILD_DIR [build-train], WORK [$BUILD_DIR/bench-pp],
# PPS ["2 4"], MB [8], MICRO [2], STEPS [10], WARMUP [2], REPEAT [3],
# HIDDEN [384] (the encoder MLP width), THREADS [1], OPT [3], RECOMPUTE [0] (1: stage backwards recompute the
# forward instead of keeping its values), RESULTS
# [bench/results/<date>-cpu-pp.md].
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build-train}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
WORK=${WORK:-$BUILD_DIR/bench-pp}
PPS=${PPS:-"2 4"}
MB=${MB:-8}
MICRO=${MICRO:-2}
STEPS=${STEPS:-10}
WARMUP=${WARMUP:-2}
REPEAT=${REPEAT:-3}
THREADS=${THREADS:-1}
OPT=${OPT:-3}
RECOMPUTE=${RECOMPUTE:-0}
HIDDEN=${HIDDEN:-384}
RESULTS=${RESULTS:-bench/results/$(date +%Y-%m-%d)-cpu-pp.md}
PY=/usr/bin/python3
COMPILE=$BUILD_DIR/bin/megagraph-compile
DATA="synthetic:sbm,nodes=4096,classes=8,features=64,signal=3,seed=1"
MPIRUN=(mpirun --oversubscribe --mca btl self,vader)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
export MEGAGRAPH_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=1
[ -x "$COMPILE" ] || { echo "build megagraph-compile in $BUILD_DIR" >&2; exit 1; }
mkdir -p "$WORK"
$PY bench/pp_bench_model.py "$WORK/model.onnx" --batch "$MICRO" \
  --hidden "$HIDDEN" 2>/dev/null

declare -A STAGES
for K in $PPS; do
  for bal in even cost; do
    exe=$WORK/pp${K}_$bal
    flags=(--train --optimizer sgd --lr 0.01 "-O$OPT"
           --plan "pp=$K,mb=$MB,recompute=$RECOMPUTE" --pp-balance=$bal)
    "$COMPILE" "$WORK/model.onnx" "${flags[@]}" --emit=exe -o "$exe"
    "$COMPILE" "$WORK/model.onnx" "${flags[@]}" --emit=gt \
      --mlir-elide-elementsattrs-if-larger=1 -o "$exe.mlir"
    STAGES[$K$bal]=$(grep -m1 -o 'stages = array<i64: [0-9, ]*>' "$exe.mlir" |
      sed 's/.*: //; s/>//; s/, /:/g')
    rm -f "$WORK/pp${K}_$bal.jsonl"
  done
  for r in $(seq "$REPEAT"); do
    for bal in even cost; do
      "${MPIRUN[@]}" -np "$K" "$WORK/pp${K}_$bal" --mode train --data "$DATA" \
        --steps $((WARMUP + STEPS)) --quiet --log-json "$WORK/pp${K}_$bal.jsonl" \
        >/dev/null
    done
  done
done

$PY - "$WORK" "$RESULTS" "$WARMUP" "$STEPS" "$MB" "$MICRO" "$THREADS" "$PPS" \
  "$(for K in $PPS; do echo -n "$K:${STAGES[${K}even]}/${STAGES[${K}cost]} "; done)" \
  "$RECOMPUTE" <<'PYEOF'
import json, statistics, sys
work, out, warm, steps, mb, micro, threads, pps, stages, rec = sys.argv[1:11]
warm, steps = int(warm), int(steps)
split = dict(s.split(":", 1) for s in stages.split())
rows, ok = [], True
for K in pps.split():
    res = {}
    for bal in ("even", "cost"):
        recs = [json.loads(l) for l in open(f"{work}/pp{K}_{bal}.jsonl")]
        n = warm + steps
        runs = [recs[i:i + n] for i in range(0, len(recs), n)]
        times = [r["step_time_s"] for run in runs for r in run[warm:]]
        peaks = [max(r["peak_bytes"][k] for run in runs for r in run)
                 for k in range(int(K))]
        res[bal] = (statistics.median(times), peaks, runs[0][-1]["loss"])
    e, c = res["even"], res["cost"]
    same = abs(e[2] - c[2]) <= 1e-4 * abs(e[2])
    ok = ok and same
    ev, co = split[K].split("/")
    rows.append(f"| {K} | even | {ev} | {e[0]*1e3:.1f} | "
                f"{', '.join(f'{p/2**20:.2f}' for p in e[1])} | {e[2]:.5f} |")
    rows.append(f"| {K} | cost | {co} | {c[0]*1e3:.1f} "
                f"(**{e[0]/c[0]:.2f}x**) | "
                f"{', '.join(f'{p/2**20:.2f}' for p in c[1])} | {c[2]:.5f} |")
text = f"""| pp | split | stages (first unit) | step ms (median) | peak MiB per rank | last loss |
|---|---|---|---|---|---|
""" + "\n".join(rows) + f"""

mb={mb} micro-batches of {micro} sequences (S=64) per step, {steps} timed
steps after {warm} warm-up, runs repeated and alternated, {threads}
thread(s) per rank, recompute={rec}. Losses of the two splits
{'agree' if ok else 'DIFFER'}.
"""
print(text)
with open(out, "a") as f:
    f.write(text + "\n")
sys.exit(0 if ok else 1)
PYEOF
