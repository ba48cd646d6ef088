#!/usr/bin/env bash
# Pipeline-parallel benchmark: even split vs cost-balanced split of
# a Graphormer-style model whose node encoder costs as much as several
# transformer layers (bench/pp_bench_model.py: MLP encoder F=64 -> HIDDEN
# (-> HIDDEN) x ENC_DEPTH -> D=64, degree and spatial-bias encoders, LAYERS
# layers, S=64). For each pp in PPS the model (micro-batch MICRO sequences)
# is compiled with --plan pp=K,mb=MB twice: --pp-balance=even (as many
# pipeline units per stage) and --pp-balance=cost (the StageSplit DP over
# unit times priced with --profile PROFILE, the plan search's hardware
# profile), and each is trained under `mpirun -np K` (MEGAGRAPH_NUM_THREADS
# threads per rank) for WARMUP + STEPS steps, REPEAT times, alternating the
# two executables. Reported: the stage boundaries, the median step time over
# all timed steps, the per-rank peak of the runtime-tracked memory
# (mgrt_peak_bytes, the largest over the steps), per stage the median time
# inside its forward/backward entries per step (compute_s, wall; and
# compute_cpu_s, process CPU) against the compiler's prediction (gt.pipeline
# stage_time x MB), the stage balance (slowest / fastest stage), the load
# average (1 min) before and after the runs, and the loss of both runs (the
# same training: the split changes no arithmetic). With OLD_COMPILE (a
# megagraph-compile of an earlier commit) the stage times that compiler
# predicts for the same boundaries are listed too. A benchmark, never a
# test; exits 1 if a run fails or the two losses differ by more than 1e-4.
#
#   bash bench/run_pp_bench.sh
#
# Environment [defaults]: BUILD_DIR [build-train], WORK [$BUILD_DIR/bench-pp],
# PPS ["2 4"], MB [4], MICRO [4], STEPS [10], WARMUP [2], REPEAT [3],
# HIDDEN [512] (the encoder MLP width), ENC_DEPTH [3] (its HIDDEN x HIDDEN
# layers), LAYERS [8] (the runs before 2026-11-30 04:00 UTC used MB=8
# MICRO=2 HIDDEN=384 ENC_DEPTH=1 LAYERS=6), THREADS [1], OPT [3],
# RECOMPUTE [0] (1: stage backwards recompute the forward instead of
# keeping its values), PROFILE [cpu-here], OLD_COMPILE [], NICE [0] (e.g.
# -10 as root: the ranks run before other processes' builds on a shared
# machine), REUSE [0] (1: keep the model and executables already in WORK,
# from an earlier run with the same settings), RESULTS
# [bench/results/<date>-cpu-pp.md].
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build-train}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
WORK=${WORK:-$BUILD_DIR/bench-pp}
PPS=${PPS:-"2 4"}
MB=${MB:-4}
MICRO=${MICRO:-4}
STEPS=${STEPS:-10}
WARMUP=${WARMUP:-2}
REPEAT=${REPEAT:-3}
THREADS=${THREADS:-1}
OPT=${OPT:-3}
RECOMPUTE=${RECOMPUTE:-0}
HIDDEN=${HIDDEN:-512}
ENC_DEPTH=${ENC_DEPTH:-3}
LAYERS=${LAYERS:-8}
PROFILE=${PROFILE:-cpu-here}
OLD_COMPILE=${OLD_COMPILE:-}
REUSE=${REUSE:-0}
NICE=${NICE:-0}
RESULTS=${RESULTS:-bench/results/$(date +%Y-%m-%d)-cpu-pp.md}
PY=/usr/bin/python3
COMPILE=$BUILD_DIR/bin/megagraph-compile
DATA="synthetic:sbm,nodes=4096,classes=8,features=64,signal=3,seed=1"
MPIRUN=(mpirun --oversubscribe --mca btl self,vader)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
[ "$NICE" != 0 ] && MPIRUN=(nice -n "$NICE" "${MPIRUN[@]}")
export MEGAGRAPH_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=1
[ -x "$COMPILE" ] || { echo "build megagraph-compile in $BUILD_DIR" >&2; exit 1; }
mkdir -p "$WORK"
[ "$REUSE" = 1 ] && [ -f "$WORK/model.onnx" ] ||
  $PY bench/pp_bench_model.py "$WORK/model.onnx" --batch "$MICRO" \
    --hidden "$HIDDEN" --enc-depth "$ENC_DEPTH" --layers "$LAYERS" 2>/dev/null

declare -A STAGES
for K in $PPS; do
  for bal in even cost; do
    exe=$WORK/pp${K}_$bal
    flags=(--train --optimizer sgd --lr 0.01 "-O$OPT" --profile "$PROFILE"
           --plan "pp=$K,mb=$MB,recompute=$RECOMPUTE" --pp-balance=$bal)
    if [ "$REUSE" != 1 ] || [ ! -x "$exe" ] || [ ! -f "$exe.mlir" ]; then
      "$COMPILE" "$WORK/model.onnx" "${flags[@]}" --emit=exe -o "$exe"
      "$COMPILE" "$WORK/model.onnx" "${flags[@]}" --emit=gt \
        --mlir-elide-elementsattrs-if-larger=1 -o "$exe.mlir"
    fi
    STAGES[$K$bal]=$(grep -m1 -o 'stages = array<i64: [0-9, ]*>' "$exe.mlir" |
      sed 's/.*: //; s/>//; s/, /:/g')
    grep -m1 -o 'stage_time = array<f64: [^>]*>' "$exe.mlir" |
      sed 's/.*: //; s/>//' >"$exe.predicted"
    [ "$REUSE" = 1 ] || rm -f "$exe.old-predicted"
    if [ -n "$OLD_COMPILE" ] && { [ "$REUSE" != 1 ] || [ ! -f "$exe.old.mlir" ]; }; then
      # The earlier compiler's unit times for the same boundaries.
      stages=${STAGES[$K$bal]}
      "$OLD_COMPILE" "$WORK/model.onnx" --train --optimizer sgd --lr 0.01 \
        --plan "pp=$K,mb=$MB,recompute=$RECOMPUTE,stages=$stages" --emit=gt \
        --mlir-elide-elementsattrs-if-larger=1 -o "$exe.old.mlir"
    fi
    [ -f "$exe.old.mlir" ] && [ -n "$OLD_COMPILE" ] &&
      grep -m1 -o 'stage_time = array<f64: [^>]*>' "$exe.old.mlir" |
      sed 's/.*: //; s/>//' >"$exe.old-predicted"
    rm -f "$WORK/pp${K}_$bal.jsonl" "$WORK/pp${K}_$bal.load"
  done
  for r in $(seq "$REPEAT"); do
    for bal in even cost; do
      before=$(cut -d' ' -f1 /proc/loadavg)
      "${MPIRUN[@]}" -np "$K" "$WORK/pp${K}_$bal" --mode train --data "$DATA" \
        --steps $((WARMUP + STEPS)) --quiet --log-json "$WORK/pp${K}_$bal.jsonl" \
        >/dev/null
      echo "$before $(cut -d' ' -f1 /proc/loadavg)" >>"$WORK/pp${K}_$bal.load"
    done
  done
done

$PY - "$WORK" "$RESULTS" "$WARMUP" "$STEPS" "$MB" "$MICRO" "$THREADS" "$PPS" \
  "$(for K in $PPS; do echo -n "$K:${STAGES[${K}even]}/${STAGES[${K}cost]} "; done)" \
  "$RECOMPUTE" "$HIDDEN" "$ENC_DEPTH" "$LAYERS" "$PROFILE" "$NICE" <<'PYEOF'
import json, os, statistics, sys
(work, out, warm, steps, mb, micro, threads, pps, stages, rec, hidden,
 depth, layers, profile, nice) = sys.argv[1:16]
warm, steps, mb = int(warm), int(steps), int(mb)
split = dict(s.split(":", 1) for s in stages.split())
med = statistics.median
def floats(path):
    if not os.path.exists(path):
        return None
    return [float(x) for x in open(path).read().replace(",", " ").split()]
rows, stage_rows, ok = [], [], True
for K in pps.split():
    res = {}
    for bal in ("even", "cost"):
        base = f"{work}/pp{K}_{bal}"
        recs = [json.loads(l) for l in open(base + ".jsonl")]
        n = warm + steps
        runs = [recs[i:i + n] for i in range(0, len(recs), n)]
        timed = [r for run in runs for r in run[warm:]]
        times = [r["step_time_s"] for r in timed]
        peaks = [max(r["peak_bytes"][k] for run in runs for r in run)
                 for k in range(int(K))]
        wall = [med(r["compute_s"][k] for r in timed) for k in range(int(K))]
        cpu = [med(r["compute_cpu_s"][k] for r in timed)
               for k in range(int(K))]
        loads = [tuple(l.split()) for l in open(base + ".load")]
        res[bal] = (med(times), peaks, runs[0][-1]["loss"], wall, cpu, loads,
                    floats(base + ".predicted"),
                    floats(base + ".old-predicted"),
                    [statistics.median(r["step_time_s"] for r in run[warm:])
                     for run in runs])
    e, c = res["even"], res["cost"]
    same = abs(e[2] - c[2]) <= 1e-4 * abs(e[2])
    ok = ok and same
    ev, co = split[K].split("/")
    for bal, r, st in (("even", e, ev), ("cost", c, co)):
        speed = f" (**{e[0]/c[0]:.2f}x**)" if bal == "cost" else ""
        rows.append(
            f"| {K} | {bal} | {st} | {r[0]*1e3:.1f}{speed} | "
            f"{', '.join(f'{t*1e3:.0f}' for t in r[8])} | "
            f"{', '.join(f'{p/2**20:.2f}' for p in r[1])} | {r[2]:.5f} | "
            f"{', '.join(f'{a}-{b}' for a, b in r[5])} |")
        def ms(v):
            return ", ".join(f"{x*1e3:.1f}" for x in v)
        def bal_of(v):
            return f"{max(v)/min(v):.2f}" if v and min(v) > 0 else "-"
        pred = [t * mb for t in r[6]] if r[6] else []
        old = [t * mb for t in r[7]] if r[7] else []
        # Prediction error of the stage shares: the largest |measured share
        # - predicted share| of the step's compute over the stages.
        def share_err(p, m):
            if not p:
                return "-"
            return f"{max(abs(a/sum(p) - b/sum(m)) for a, b in zip(p, m))*100:.0f}%"
        # 1F1B step from the measured CPU times C_k per step: the first
        # micro-batch passes every stage (sum C_k / M), the slowest stage
        # then runs the other M - 1; the ranks share nproc cores.
        bound = max(sum(r[4]) / mb + (mb - 1) / mb * max(r[4]),
                    sum(r[4]) / os.cpu_count())
        stage_rows.append(
            f"| {K} | {bal} | {st} | {ms(r[3])} | {bal_of(r[3])} | "
            f"{ms(r[4])} | {bal_of(r[4])} | {ms(pred)} | {bal_of(pred)} | "
            f"{share_err(pred, r[4])} | {ms(old) or '-'} | "
            f"{share_err(old, r[4])} | {bound*1e3:.1f} |")
text = f"""HIDDEN={hidden}, ENC_DEPTH={depth}, LAYERS={layers}, profile {profile}, nice {nice}:
mb={mb} micro-batches of {micro} sequences (S=64) per step, {steps} timed
steps after {warm} warm-up, runs repeated and alternated, {threads}
thread(s) per rank, recompute={rec}. Losses of the two splits
{'agree' if ok else 'DIFFER'}.

| pp | split | stages (first unit) | step ms (median) | median per run | peak MiB per rank | last loss | load avg before-after each run |
|---|---|---|---|---|---|---|---|
""" + "\n".join(rows) + """

Per stage, ms per step (median over the timed steps): time inside the
stage's forward/backward entries (wall; process CPU), the compiler's
prediction (gt.pipeline stage_time x mb), balance = slowest / fastest
stage, share error = largest |measured CPU share - predicted share| of the
step's compute over the stages (new model; the earlier compiler's when
OLD_COMPILE is set); 1F1B model = max(sum of the stages / mb + (mb - 1) /
mb x slowest stage, sum of the stages / nproc) from the measured CPU times:
the step time on an otherwise idle machine, without transfers.

| pp | split | stages | compute wall | bal | compute CPU | bal | predicted | bal | share err | old predicted | old share err | 1F1B model ms |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
""" + "\n".join(stage_rows) + "\n"
print(text)
with open(out, "a") as f:
    f.write(text + "\n")
sys.exit(0 if ok else 1)
PYEOF
